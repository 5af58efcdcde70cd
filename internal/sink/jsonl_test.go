package sink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJSONLLines(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONL(&buf)
	for i := range 3 {
		if err := w.Write(Message{Series: "a&b", T: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %d bytes before Flush", buf.Len())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var m Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if m.T != int64(n) || m.Series != "a&b" {
			t.Errorf("line %d: got %+v", n+1, m)
		}
		if !strings.Contains(sc.Text(), `"a&b"`) {
			t.Errorf("line %d: HTML-escaped series: %s", n+1, sc.Text())
		}
		n++
	}
	if n != 3 {
		t.Errorf("got %d lines, want 3", n)
	}
}

// TestJSONLNaN: JSON cannot carry NaN; the bad value is refused, nothing of it
// is written, and the writer stays usable.
func TestJSONLNaN(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONL(&buf)
	if err := w.Write(Step{Mean: math.NaN()}); err == nil {
		t.Error("NaN encoded without error")
	}
	if err := w.Write(Step{H: 1}); err != nil {
		t.Fatalf("writer unusable after a bad value: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "\n"); got != 1 {
		t.Errorf("got %d lines, want 1: %q", got, buf.String())
	}
}

type failWriter struct{}

var errDisk = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDisk }

func TestJSONLStickyError(t *testing.T) {
	w := NewJSONL(failWriter{})
	_ = w.Write(Step{})
	if err := w.Flush(); !errors.Is(err, errDisk) {
		t.Fatalf("Flush: got %v, want %v", err, errDisk)
	}
	if err := w.Write(Step{}); !errors.Is(err, errDisk) {
		t.Errorf("Write after failure: got %v, want %v", err, errDisk)
	}
	if err := w.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close after failure: got %v, want %v", err, errDisk)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write(Step{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: got %v, want ErrClosed", err)
	}
}

func TestCreateJSONL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	w, err := CreateJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Step{H: 7}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"h":7,"t":0,"mean":0,"std":0,"lo":0,"hi":0}`+"\n" {
		t.Errorf("file content %q", b)
	}
}
