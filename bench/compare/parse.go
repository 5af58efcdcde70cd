package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// num is a float64 read from JSON that also accepts null and the strings
// "NaN", "Inf", "+Inf", "-Inf" (as non-finite values), so that a forecast
// file with a non-finite value is counted rather than unreadable.
type num float64

func (n *num) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*n = num(math.NaN())
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*n = num(v)
	return nil
}

// message is the part of a streamd forecast message (internal/sink.Message)
// the harness reads: the time T of the observation after which the forecast
// was issued, and the steps h = 1..H of the forecast of T+h.
type message struct {
	Series   string    `json:"series"`
	T        int64     `json:"t"`
	Observed *observed `json:"observed"`
	Steps    []step    `json:"steps"`
}

type observed struct {
	Y          num `json:"y"`
	Prediction num `json:"prediction"`
	Std        num `json:"std"`
	DF         num `json:"df"` // 0 when absent: a normal
}

type step struct {
	H    int   `json:"h"`
	T    int64 `json:"t"`
	Mean num   `json:"mean"`
	Std  num   `json:"std"`
	Lo   num   `json:"lo"`
	Hi   num   `json:"hi"`
}

// readMessages reads a JSON-lines forecast file; blank lines are skipped.
func readMessages(r io.Reader) ([]message, error) {
	var out []message
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

func readMessagesFile(path string) ([]message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	msgs, err := readMessages(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return msgs, nil
}

// iteratedForecast extracts the H-step forecast of an iterated backtest: the
// last message with steps, which must hold h = 1..H each once with a finite
// mean. Non-finite bounds are kept (they count as not covering).
func iteratedForecast(msgs []message, H int) (forecast, error) {
	var last *message
	for i := range msgs {
		if len(msgs[i].Steps) > 0 {
			last = &msgs[i]
		}
	}
	if last == nil {
		return forecast{}, fmt.Errorf("no forecast message with steps")
	}
	f := forecast{Mean: make([]float64, H), Lo: make([]float64, H), Hi: make([]float64, H)}
	seen := make([]bool, H)
	for _, s := range last.Steps {
		if s.H < 1 || s.H > H {
			continue
		}
		if seen[s.H-1] {
			return forecast{}, fmt.Errorf("step h = %d given twice", s.H)
		}
		seen[s.H-1] = true
		f.Mean[s.H-1], f.Lo[s.H-1], f.Hi[s.H-1] = float64(s.Mean), float64(s.Lo), float64(s.Hi)
	}
	for h, ok := range seen {
		if !ok {
			return forecast{}, fmt.Errorf("the forecast has no step h = %d (of %d)", h+1, H)
		}
		if !isFinite(f.Mean[h]) {
			return forecast{}, fmt.Errorf("the mean of step h = %d is not finite", h+1)
		}
	}
	return f, nil
}

// oneStepForecasts maps each target index to the step h = 1 of the forecast
// issued after the observation before it (target = message T + 1: with a
// plain data file, T is the 1-based sample number). A later message for the
// same target replaces an earlier one.
func oneStepForecasts(msgs []message) map[int]oneStep {
	fc := map[int]oneStep{}
	for _, m := range msgs {
		for _, s := range m.Steps {
			if s.H == 1 {
				fc[int(m.T)+1] = oneStep{Mean: float64(s.Mean), Lo: float64(s.Lo), Hi: float64(s.Hi)}
			}
		}
	}
	return fc
}

// readColumns reads a CSV table whose columns are series (header = names);
// a shorter column ends in empty cells. A non-empty cell after an empty one
// in the same column is an error.
func readColumns(r io.Reader) (names []string, cols [][]float64, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("empty table")
	}
	for _, h := range rows[0] {
		names = append(names, strings.TrimSpace(h))
	}
	cols = make([][]float64, len(names))
	ended := make([]bool, len(names))
	for i, row := range rows[1:] {
		for j := range names {
			cell := ""
			if j < len(row) {
				cell = strings.TrimSpace(row[j])
			}
			if cell == "" {
				ended[j] = true
				continue
			}
			if ended[j] {
				return nil, nil, fmt.Errorf("line %d: column %s has a value after an empty cell", i+2, names[j])
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || !isFinite(v) {
				return nil, nil, fmt.Errorf("line %d: column %s: %q is not a finite number", i+2, names[j], cell)
			}
			cols[j] = append(cols[j], v)
		}
	}
	return names, cols, nil
}

func readColumnsFile(path string) ([]string, [][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	names, cols, err := readColumns(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return names, cols, nil
}

// rForecast is one row of the forecasts an R script writes:
// method,series,h,mean,lo,hi (lo and hi "NA" when the method gave no band).
type rForecast struct {
	Method, Series string
	H              int
	Mean, Lo, Hi   float64
}

// readRForecasts reads an R script's forecasts into method → series →
// forecast of H steps. A (method, series) with a missing step or a
// non-finite mean is dropped (it counts as a failure of that method).
func readRForecasts(r io.Reader, H int) (map[string]map[string]forecast, error) {
	cr := csv.NewReader(r)
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no header")
	}
	want := []string{"method", "series", "h", "mean", "lo", "hi"}
	if strings.Join(rows[0], ",") != strings.Join(want, ",") {
		return nil, fmt.Errorf("header %v, want %v", rows[0], want)
	}
	out := map[string]map[string]forecast{}
	bad := map[[2]string]bool{}
	for i, row := range rows[1:] {
		if len(row) != len(want) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", i+2, len(row), len(want))
		}
		h, err := strconv.Atoi(row[2])
		if err != nil || h < 1 {
			return nil, fmt.Errorf("line %d: bad h %q", i+2, row[2])
		}
		if h > H {
			continue
		}
		key := [2]string{row[0], row[1]}
		if out[row[0]] == nil {
			out[row[0]] = map[string]forecast{}
		}
		f, ok := out[row[0]][row[1]]
		if !ok {
			f = forecast{Mean: nanSlice(H), Lo: nanSlice(H), Hi: nanSlice(H)}
		}
		f.Mean[h-1] = parseRNum(row[3])
		f.Lo[h-1] = parseRNum(row[4])
		f.Hi[h-1] = parseRNum(row[5])
		out[row[0]][row[1]] = f
		if !isFinite(f.Mean[h-1]) {
			bad[key] = true
		}
	}
	for method, bySeries := range out {
		for series, f := range bySeries {
			complete := true
			for _, v := range f.Mean {
				complete = complete && isFinite(v)
			}
			if !complete || bad[[2]string{method, series}] {
				delete(bySeries, series)
			}
		}
	}
	return out, nil
}

// parseRNum reads a number R wrote; NA, NaN, Inf and anything unreadable
// become NaN or ±Inf.
func parseRNum(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}
