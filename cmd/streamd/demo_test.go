package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// The demo runs the whole path on its own broker: within a few seconds every
// series is past warm-up with one-step scores and a forecast, and it stops
// cleanly at the end of --duration.
func TestDemo(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"demo", "--duration", "5s", "--rate", "400", "--http", "127.0.0.1:0"}, nil, &out, &errb)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	text := out.String()
	for _, want := range []string{"broker   127.0.0.1:", "metrics  http://127.0.0.1:", "kcat -C -b", "stopping"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// The final table: a scored line with a forecast for each series.
	final := text[strings.LastIndex(text, "series "):]
	for _, id := range []string{"laser", "mackey-glass", "plant"} {
		re := regexp.MustCompile(`(?m)^` + id + `\s+\d+\s+[0-9.e-]+\s+\d+\.\d%\s+\S+ \[`)
		if !re.MatchString(final) {
			t.Errorf("no scored line with a forecast for %s:\n%s", id, final)
		}
	}
}
