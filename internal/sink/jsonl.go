package sink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// JSONL writes values as JSON lines (one JSON document per line, RFC 8259
// text followed by '\n') through a buffer. Nothing reaches the underlying
// writer before the buffer fills or Flush or Close is called.
//
// The first error is sticky: every later Write, Flush and Close returns it.
// A JSONL is owned by one goroutine.
type JSONL struct {
	bw     *bufio.Writer
	line   bytes.Buffer  // one encoded line, reused
	enc    *json.Encoder // writes to line
	closer io.Closer     // closed by Close; nil if the writer is not ours
	err    error
	closed bool
}

// NewJSONL returns a JSONL writing to w. Close flushes but does not close w.
func NewJSONL(w io.Writer) *JSONL {
	j := &JSONL{bw: bufio.NewWriterSize(w, 64<<10)}
	j.enc = json.NewEncoder(&j.line)
	j.enc.SetEscapeHTML(false)
	return j
}

// CreateJSONL creates (or truncates) the file at path and returns a JSONL
// writing to it; Close closes the file.
func CreateJSONL(path string) (*JSONL, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	j := NewJSONL(f)
	j.closer = f
	return j, nil
}

// ErrClosed is returned by Write and Flush after Close.
var ErrClosed = errors.New("sink: writer is closed")

// Write appends v as one line. A value that cannot be encoded (a NaN or an
// infinity, which JSON cannot represent) is an error and nothing is written
// for it; the error is not sticky.
func (j *JSONL) Write(v any) error {
	if j.closed {
		return ErrClosed
	}
	if j.err != nil {
		return j.err
	}
	j.line.Reset()
	if err := j.enc.Encode(v); err != nil { // Encode appends the '\n'
		return fmt.Errorf("sink: encode: %w", err)
	}
	if _, err := j.bw.Write(j.line.Bytes()); err != nil {
		j.err = err
		return err
	}
	return nil
}

// Flush writes the buffered lines to the underlying writer.
func (j *JSONL) Flush() error {
	if j.closed {
		return ErrClosed
	}
	if j.err != nil {
		return j.err
	}
	j.err = j.bw.Flush()
	return j.err
}

// Close flushes and, for a writer from CreateJSONL, closes the file. It
// returns the first error met; calling it again returns nil.
func (j *JSONL) Close() error {
	if j.closed {
		return nil
	}
	err := j.err
	if err == nil {
		err = j.bw.Flush()
	}
	j.closed = true
	if j.closer != nil {
		if cerr := j.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
