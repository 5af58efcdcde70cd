package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/streamd/streamd/internal/daemon"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/source"
)

// runCommand is `streamd run`: the daemon.
type runCommand struct{}

func (runCommand) Run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "YAML configuration `FILE` (default: built-in defaults)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: streamd run [--config FILE]\n\nConsumes the input topics, keeps a forecaster per series and publishes\nforecasts, until SIGINT or SIGTERM.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := DefaultConfig()
	if *path != "" {
		var err error
		if cfg, err = LoadConfig(*path); err != nil {
			return err
		}
	}
	dc, err := cfg.daemon()
	if err != nil {
		return err
	}
	dc.Logger = slog.New(slog.NewJSONHandler(stderr, nil))
	d, err := daemon.Open(dc)
	if err != nil {
		return err
	}
	dc.Logger.Info("streamd running", "version", versionString(), "brokers", dc.Brokers,
		"input_topics", dc.InputTopics, "http", cfg.HTTP.Listen)
	<-ctx.Done()
	dc.Logger.Info("streamd stopping: publishing processed records and committing")
	done := make(chan error, 1)
	go func() { done <- d.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("run: shutdown did not finish within 30 s")
	}
}

// daemon maps a valid configuration onto the daemon's.
func (c *Config) daemon() (daemon.Config, error) {
	reg := online.RegistryConfig{Default: c.Model.Learner(c.Forecast, c.Robust), MaxSeries: c.Kafka.MaxSeriesPerPartition}
	for i, s := range c.Series {
		m, err := c.seriesModel(i)
		if err != nil {
			return daemon.Config{}, err
		}
		reg.Overrides = append(reg.Overrides, online.Override{Match: s.Match, Config: m.Learner(c.Forecast, c.Robust)})
	}
	f := c.Kafka.Fields
	return daemon.Config{
		Brokers: c.Kafka.Brokers, Group: c.Kafka.Group, InputTopics: c.Kafka.InputTopics,
		ForecastTopic: c.Kafka.ForecastTopic, DeadLetterTopic: c.Kafka.DeadLetterTopic,
		Decoder: source.Decoder{Fields: source.Fields{Series: f.Series, T: f.T, Y: f.Y, U: f.U},
			MaxBytes: c.Kafka.MaxRecordBytes},
		Registry: reg,
		Listen:   c.HTTP.Listen,
		Build:    daemon.BuildInfo{Version: versionOnly(), GoVersion: runtime.Version()},
	}, nil
}
