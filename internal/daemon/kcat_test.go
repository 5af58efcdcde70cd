package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamd/streamd/internal/sink"
)

// kcatPath finds kcat, an independent Kafka client (Debian package kcat).
// CI installs it, and there its absence fails the test; elsewhere it skips.
func kcatPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kcat is not installed (.ci/run installs the Debian package kcat)")
		}
		t.Skip("kcat not installed; CI runs this test")
	}
	return p
}

// Interop with an independent client: records produced by kcat reach the
// daemon, and kcat consumes the forecasts it publishes.
func TestKcatInterop(t *testing.T) {
	kcat := kcatPath(t)
	c := testCluster(t, 2, "series", "forecasts", "dlq")
	addr := c.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var in bytes.Buffer
	const n = 150
	for i, v := range series(0, n) {
		fmt.Fprintf(&in, "k1:{\"t\":%d,\"y\":%.17g}\n", i+1, v)
	}
	produce := exec.CommandContext(ctx, kcat, "-P", "-b", addr, "-t", "series", "-K:")
	produce.Stdin = &in
	if out, err := produce.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	mustOpen(t, testConfig([]string{addr}))
	want := n - 100 + 1
	consume := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "forecasts", "-o", "beginning",
		"-c", fmt.Sprint(want), "-f", "%k\t%s\n")
	out, err := consume.Output()
	if err != nil {
		t.Fatalf("kcat -C: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != want {
		t.Fatalf("kcat read %d forecasts, want %d", len(lines), want)
	}
	for _, l := range lines {
		key, value, _ := strings.Cut(l, "\t")
		var m sink.Message
		if err := json.Unmarshal([]byte(value), &m); err != nil || key != "k1" || m.Series != "k1" {
			t.Fatalf("line %q: %v", l, err)
		}
	}
}

// The daemon's metrics pass Prometheus' own lint (names, units, help):
// those of an opened daemon, so that the gauges Open registers count too.
func TestMetricsLint(t *testing.T) {
	cfg := testConfig([]string{"127.0.0.1:1"})
	cfg.Workers = 1
	d := mustOpen(t, cfg)
	n, err := testutil.GatherAndCount(d.metrics.registry)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := testutil.GatherAndCount(newMetrics().registry)
	if err != nil {
		t.Fatal(err)
	}
	if n < fresh+5 {
		t.Errorf("an opened daemon gathers %d series, want the %d of newMetrics and Open's 5 gauges", n, fresh)
	}
	problems, err := testutil.GatherAndLint(d.metrics.registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
