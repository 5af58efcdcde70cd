package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/streamd/streamd/internal/daemon"
	"github.com/streamd/streamd/internal/online"
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
	dc.StateBytes = stateBudget(cfg.Process.MemoryLimitMiB)
	d, err := daemon.Open(dc)
	if err != nil {
		return err
	}
	httpAddr := cfg.HTTP.Listen
	if a := d.Addr(); a != nil {
		httpAddr = a.String() // the port bound, where the configuration says 0
	}
	dc.Logger.Info("streamd running", "version", versionString(), "brokers", dc.Brokers,
		"input_topics", dc.InputTopics, "http", httpAddr)
	select {
	case <-ctx.Done():
	case <-d.Done(): // stopped on its own: Close returns why
		return d.Close()
	}
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
	tc, mech, err := c.Kafka.security()
	if err != nil {
		return daemon.Config{}, err
	}
	hc, err := c.HTTP.server()
	if err != nil {
		return daemon.Config{}, err
	}
	var dialer *kafka.Dialer
	var transport kafka.RoundTripper
	if tc != nil || mech != nil {
		dialer = &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tc, SASLMechanism: mech}
		transport = &kafka.Transport{TLS: tc, SASL: mech}
	}
	return daemon.Config{
		Dialer: dialer, Transport: transport,
		Brokers: c.Kafka.Brokers, Group: c.Kafka.Group, InputTopics: c.Kafka.InputTopics,
		ForecastTopic: c.Kafka.ForecastTopic, DeadLetterTopic: c.Kafka.DeadLetterTopic, DeadLetterMaxBytes: c.Kafka.DeadLetterMaxBytes,
		Partitioner: c.Kafka.Partitioner,
		StateTopic:  c.Kafka.stateTopic(), CheckpointRecords: c.Kafka.CheckpointRecords, CheckpointEvery: c.Kafka.CheckpointInterval,
		Decoder:  c.decoder(),
		Registry: reg,
		Listen:   c.HTTP.Listen,
		HTTP:     hc,
		Workers:  c.Process.workers(),
		Build:    daemon.BuildInfo{Version: versionOnly(), GoVersion: runtime.Version()},
	}, nil
}

// workers maps process.workers onto daemon.Config.Workers: auto is the
// daemon's default (0), 0 no pool (−1).
func (p *ProcessConfig) workers() int {
	switch {
	case p.Workers.Auto:
		return 0
	case p.Workers.Value == 0:
		return -1
	}
	return p.Workers.Value
}

// security builds the TLS configuration and SASL mechanism of kafka.tls and
// kafka.sasl (nil, nil when neither is set).
func (k *KafkaConfig) security() (*tls.Config, sasl.Mechanism, error) {
	var tc *tls.Config
	if k.TLS.Enabled {
		tc = &tls.Config{ServerName: k.TLS.ServerName, InsecureSkipVerify: k.TLS.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
		if k.TLS.CAFile != "" {
			pem, err := os.ReadFile(k.TLS.CAFile)
			if err != nil {
				return nil, nil, fmt.Errorf("kafka.tls.ca_file: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, nil, fmt.Errorf("kafka.tls.ca_file: no PEM certificate in %s", k.TLS.CAFile)
			}
		}
		if k.TLS.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(k.TLS.CertFile, k.TLS.KeyFile)
			if err != nil {
				return nil, nil, fmt.Errorf("kafka.tls: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
	}
	var mech sasl.Mechanism
	var err error
	switch k.SASL.Mechanism {
	case "plain":
		mech = plain.Mechanism{Username: k.SASL.Username, Password: k.SASL.Password}
	case "scram-sha-256":
		mech, err = scram.Mechanism(scram.SHA256, k.SASL.Username, k.SASL.Password)
	case "scram-sha-512":
		mech, err = scram.Mechanism(scram.SHA512, k.SASL.Username, k.SASL.Password)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("kafka.sasl: %w", err)
	}
	return tc, mech, nil
}

// server builds the daemon's HTTP configuration: the TLS configuration and
// the token are read from their files (or the environment) here, at start.
func (h *HTTPConfig) server() (daemon.HTTPConfig, error) {
	dc := daemon.HTTPConfig{ReadHeaderTimeout: h.ReadHeaderTimeout, ReadTimeout: h.ReadTimeout, WriteTimeout: h.WriteTimeout,
		IdleTimeout: h.IdleTimeout, PublicMetrics: h.Auth.PublicMetrics,
		WhatIfMaxConcurrent: h.WhatIf.MaxConcurrent, WhatIfMaxHorizon: h.WhatIf.MaxHorizon}
	if h.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(h.TLS.CertFile, h.TLS.KeyFile)
		if err != nil {
			return dc, fmt.Errorf("http.tls: %w", err)
		}
		dc.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if h.TLS.ClientCAFile != "" {
			pem, err := os.ReadFile(h.TLS.ClientCAFile)
			if err != nil {
				return dc, fmt.Errorf("http.tls.client_ca_file: %w", err)
			}
			dc.TLS.ClientCAs = x509.NewCertPool()
			if !dc.TLS.ClientCAs.AppendCertsFromPEM(pem) {
				return dc, fmt.Errorf("http.tls.client_ca_file: no PEM certificate in %s", h.TLS.ClientCAFile)
			}
			// Verified when given; required by the daemon on every route
			// but /healthz.
			dc.TLS.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	switch {
	case h.Auth.TokenFile != "":
		b, err := os.ReadFile(h.Auth.TokenFile)
		if err != nil {
			return dc, fmt.Errorf("http.auth.token_file: %w", err)
		}
		dc.Token = strings.TrimSpace(string(b))
		if dc.Token == "" {
			return dc, fmt.Errorf("http.auth.token_file: %s is empty", h.Auth.TokenFile)
		}
	case h.Auth.TokenEnv != "":
		dc.Token = strings.TrimSpace(os.Getenv(h.Auth.TokenEnv))
		if dc.Token == "" {
			return dc, fmt.Errorf("http.auth.token_env: the environment variable %s is empty or unset", h.Auth.TokenEnv)
		}
	}
	return dc, nil
}

// stateBudget sets the Go runtime's soft memory limit to mib MiB when mib
// > 0 (else the runtime keeps GOMEMLIMIT's, or none) and returns the
// series state's budget: half the limit in force, since the heap peaks
// near twice the live series state between collections; 0 (no budget)
// without a limit.
func stateBudget(mib int) int64 {
	if mib > 0 {
		debug.SetMemoryLimit(int64(mib) << 20)
	}
	limit := debug.SetMemoryLimit(-1) // -1 reads the limit in force
	if limit == math.MaxInt64 {
		return 0
	}
	return limit / 2
}
