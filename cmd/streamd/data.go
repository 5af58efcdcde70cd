package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamd/streamd/internal/calendar"
)

// series is a time series read from a file: target y, optional exogenous
// inputs u (row-major, nu per sample) and times t.
type series struct {
	t []int64
	// timed says t holds times in Unix milliseconds (calendar.ParseTime's
	// isTime), not sequence numbers.
	timed bool
	y     []float64
	nu    int
	u     []float64
	truth []float64 // what forecasts are scored against; nil = y
	line  []int     // source line of each sample, for messages
	// unitHint says the integer times look like the other time unit's
	// (calendar.UnitHint); "" when they do not, or are not all integers.
	unitHint string
}

func (s *series) len() int { return len(s.y) }

// target is the value forecasts of sample k are scored against: the truth
// column when one was given (e.g. the clean signal behind contaminated
// observations), else y.
func (s *series) target(k int) float64 {
	if s.truth != nil {
		return s.truth[k]
	}
	return s.y[k]
}

// inputs returns u_k (a view).
func (s *series) inputs(k int) []float64 { return s.u[k*s.nu : (k+1)*s.nu] }

// at returns the index of the sample nearest time t, if one is within tol
// of it (tol 0: at t itself; a missing value leaves its t without a
// sample). O(log n).
func (s *series) at(t, tol int64) (int, bool) {
	i, _ := slices.BinarySearch(s.t, t)
	best, ok := -1, false
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(s.t) && absDiff(s.t[j], t) <= tol && (!ok || absDiff(s.t[j], t) < absDiff(s.t[best], t)) {
			best, ok = j, true
		}
	}
	return best, ok
}

// absDiff returns |a − b|.
func absDiff(a, b int64) int64 {
	if a < b {
		return b - a
	}
	return a - b
}

// columns says which CSV columns to read, all empty for a plain file, and
// how to read the time column.
type columns struct {
	y      string   // name or 0-based index; "" = the only column not otherwise used
	inputs []string // names or 0-based indices
	time   string   // name or 0-based index; "" = t is the 1-based sample number
	truth  string   // name or 0-based index of the scoring target; "" = y
	// unit is what an integer time is (model.time_unit).
	unit calendar.Unit
	// needTime: the model derives calendar features from t (model.calendar),
	// so t must be a time, not a sequence number.
	needTime bool
}

// fromModel sets how the time column is read from the model section: its
// time_unit, and whether a calendar needs t as a time.
func (c *columns) fromModel(m *ModelConfig) {
	c.unit = m.timeUnit()
	c.needTime = len(m.Calendar.Features) > 0
}

func (c columns) any() bool { return c.y != "" || len(c.inputs) > 0 || c.time != "" || c.truth != "" }

// errData marks a problem with the content of a data file.
var errData = errors.New("bad data")

func dataErrorf(line int, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", errData, line, fmt.Sprintf(format, args...))
}

// readSeries reads either one value per line (blank lines and lines starting
// with # are skipped) or, when the first such line is neither a number nor
// missing, a CSV file whose first line is a header. Without a time column, t
// is the 1-based sample number, so that sample k of the file is t = k. A
// time column is read by calendar.ParseTime in cols.unit (the daemon's
// parser of t), every row of one kind: sequence numbers, or times. A
// missing y (NA, NaN or null; in a CSV file also an empty cell, in a
// one-column CSV a blank line) is a gap:
// no sample at its t, as a record that never came (the Learner fills gaps
// from its predictions). In a CSV file, trailing rows with a missing y end
// the series (short columns of a table). t must increase from row to row,
// missing rows included, as the daemon requires of a series' records. Any
// other non-finite value is an error. With cols.needTime, t must be times.
func readSeries(r io.Reader, cols columns) (*series, error) {
	s, err := readSeriesData(r, cols)
	if err == nil && cols.needTime && !s.timed {
		what := "t is the sample number"
		if cols.time != "" {
			what = fmt.Sprintf("--time %s holds sequence numbers (model.time_unit: sequence)", cols.time)
		}
		return nil, fmt.Errorf("%w: model.calendar derives features from t, but %s: give --time a column of RFC 3339 times, dates YYYY-MM-DD or months YYYY-MM, or of Unix times with model.time_unit: ms or s",
			errData, what)
	}
	return s, err
}

func readSeriesData(r io.Reader, cols columns) (*series, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	// A byte-order mark (a spreadsheet's UTF-8 export) is not part of the
	// first value or column name.
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	first, ok := firstDataLine(string(b))
	if !ok {
		return nil, fmt.Errorf("%w: no data", errData)
	}
	if _, perr := strconv.ParseFloat(first, 64); perr == nil || missing(first) {
		if cols.any() {
			return nil, fmt.Errorf("%w: --column, --inputs, --time and --truth need a CSV file with a header line (the first line is the value %s)",
				errData, first)
		}
		return readPlain(bytes.NewReader(b))
	}
	if !strings.Contains(first, ",") {
		b = blankCells(b)
	}
	return readCSV(bytes.NewReader(b), cols)
}

// blankCells returns the text of a one-column CSV with every blank line
// after its header written as an empty cell (""): encoding/csv skips blank
// lines, and in one column a blank line is the empty cell of a missing
// value, a gap in t like any other.
func blankCells(b []byte) []byte {
	var out bytes.Buffer
	header := false
	for line := range strings.Lines(string(b)) {
		t := strings.TrimSpace(line)
		switch {
		case t == "" && header:
			out.WriteString("\"\"\n")
		default:
			header = header || t != "" && !strings.HasPrefix(t, "#")
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// firstDataLine returns the first line that is not blank or a comment, trimmed.
func firstDataLine(text string) (string, bool) {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return t, true
		}
	}
	return "", false
}

func readPlain(r io.Reader) (*series, error) {
	s := &series{}
	sc := bufio.NewScanner(r)
	k := int64(0) // the sample number, missing values counted
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k++
		if missing(t) {
			continue
		}
		v, err := parseFinite(t)
		if err != nil {
			return nil, dataErrorf(n, "%v", err)
		}
		s.y = append(s.y, v)
		s.t = append(s.t, k)
		s.line = append(s.line, n)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func readCSV(r io.Reader, cols columns) (*series, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: reading the CSV header: %v", errData, err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	used := map[int]bool{}
	tcol := -1
	if cols.time != "" {
		if tcol, err = columnIndex(header, cols.time, "--time"); err != nil {
			return nil, err
		}
		used[tcol] = true
	}
	ucols := make([]int, len(cols.inputs))
	for i, c := range cols.inputs {
		if ucols[i], err = columnIndex(header, c, "--inputs"); err != nil {
			return nil, err
		}
		used[ucols[i]] = true
	}
	truthCol := -1
	if cols.truth != "" {
		if truthCol, err = columnIndex(header, cols.truth, "--truth"); err != nil {
			return nil, err
		}
		used[truthCol] = true
	}
	var ycol int
	if cols.y != "" {
		if ycol, err = columnIndex(header, cols.y, "--column"); err != nil {
			return nil, err
		}
	} else {
		var free []int
		for i := range header {
			if !used[i] {
				free = append(free, i)
			}
		}
		if len(free) != 1 {
			return nil, &usageError{msg: fmt.Sprintf("the data has columns %s: choose y with --column", strings.Join(header, ", "))}
		}
		ycol = free[0]
	}
	if used[ycol] {
		return nil, &usageError{msg: fmt.Sprintf("column %q is both y and a time or input column", header[ycol])}
	}
	s := &series{nu: len(ucols)}
	integers := tcol >= 0 // every t an integer: a Unix time when the unit says so
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errData, err)
		}
		yv := math.NaN() // missing: a gap, or the end of the series if only empties follow
		if cell := strings.TrimSpace(rec[ycol]); cell != "" && !missing(cell) {
			if yv, err = parseFinite(cell); err != nil {
				return nil, dataErrorf(line, "column %s: %v", header[ycol], err)
			}
		}
		for _, c := range ucols {
			cell := strings.TrimSpace(rec[c])
			v, err := parseFinite(cell)
			if err != nil && !math.IsNaN(yv) {
				return nil, dataErrorf(line, "column %s: %v", header[c], err)
			}
			s.u = append(s.u, v) // a missing sample's inputs are not used
		}
		if truthCol >= 0 {
			v := math.NaN()
			if cell := strings.TrimSpace(rec[truthCol]); cell != "" && !missing(cell) && !math.IsNaN(yv) {
				if v, err = parseFinite(cell); err != nil {
					return nil, dataErrorf(line, "column %s: %v", header[truthCol], err)
				}
			}
			s.truth = append(s.truth, v)
		}
		t := int64(len(s.y) + 1)
		if tcol >= 0 {
			var isTime bool
			cell := strings.TrimSpace(rec[tcol])
			if t, isTime, err = calendar.ParseTime(cell, cols.unit); err != nil {
				return nil, dataErrorf(line, "column %s: %v", header[tcol], err)
			}
			if integers {
				if _, err := strconv.ParseInt(cell, 10, 64); err != nil {
					integers = false
				}
			}
			switch {
			case len(s.y) == 0:
				s.timed = isTime
			case isTime != s.timed:
				return nil, dataErrorf(line, "column %s: %q is %s but the first row's t is %s: a series' t is of one kind (with model.time_unit: %s an integer is %s)",
					header[tcol], strings.TrimSpace(rec[tcol]), timeKind(isTime), timeKind(s.timed), cols.unit, timeKind(cols.unit != calendar.Sequence))
			case t <= s.t[len(s.t)-1]:
				return nil, dataErrorf(line, "column %s: t %d is not after the previous row's %d", header[tcol], t, s.t[len(s.t)-1])
			}
		}
		s.y = append(s.y, yv)
		s.t = append(s.t, t)
		s.line = append(s.line, line)
	}
	if integers && len(s.t) > 0 {
		s.unitHint = calendar.UnitHint(s.t[0], s.t[len(s.t)-1], cols.unit) // t increases
	}
	end := len(s.y)
	for end > 0 && math.IsNaN(s.y[end-1]) {
		end--
	}
	s.y, s.t, s.line, s.u = s.y[:end], s.t[:end], s.line[:end], s.u[:end*s.nu]
	if s.truth != nil {
		s.truth = s.truth[:end]
	}
	// The missing samples within: gaps in t.
	kept := 0
	for k := range s.y {
		if math.IsNaN(s.y[k]) {
			continue
		}
		if s.truth != nil && math.IsNaN(s.truth[k]) {
			return nil, dataErrorf(s.line[k], "column %s is missing beside a value of y", header[truthCol])
		}
		s.y[kept], s.t[kept], s.line[kept] = s.y[k], s.t[k], s.line[k]
		copy(s.u[kept*s.nu:(kept+1)*s.nu], s.u[k*s.nu:(k+1)*s.nu])
		if s.truth != nil {
			s.truth[kept] = s.truth[k]
		}
		kept++
	}
	s.y, s.t, s.line, s.u = s.y[:kept], s.t[:kept], s.line[:kept], s.u[:kept*s.nu]
	if s.truth != nil {
		s.truth = s.truth[:kept]
	}
	return s, nil
}

// missing reports whether a value's text says it is missing: NA, NaN or
// null, in any case.
func missing(v string) bool {
	return strings.EqualFold(v, "NA") || strings.EqualFold(v, "NaN") || strings.EqualFold(v, "null")
}

// columnIndex resolves a column given by header name or 0-based index.
func columnIndex(header []string, col, flagName string) (int, error) {
	if i := slices.Index(header, col); i >= 0 {
		return i, nil
	}
	if i, err := strconv.Atoi(col); err == nil && i >= 0 && i < len(header) {
		return i, nil
	}
	sep := ""
	if len(header) == 1 && strings.ContainsAny(header[0], ";\t|") {
		sep = ": the file is read as comma-separated CSV, and its header looks separated by another character"
	}
	return 0, &usageError{msg: fmt.Sprintf("%s %s: no such column (the data has %s; indices count from 0)%s",
		flagName, col, strings.Join(header, ", "), sep)}
}

func parseFinite(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not finite", s)
	}
	return v, nil
}

// timeKind names the kind of a t for messages.
func timeKind(isTime bool) string {
	if isTime {
		return "a time"
	}
	return "a sequence number"
}
