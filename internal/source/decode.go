// Package source decodes and validates the input records of the daemon
// (docs/messages.md). It knows the message format, not Kafka: a record is a key, a
// value and a timestamp.
package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/reject"
)

// DefaultMaxSeriesBytes is the default bound of a series id's length.
const DefaultMaxSeriesBytes = 256

// MaxFutureRows bounds the rows of a record's future field: 10 000 steps
// ahead is more than any forecast horizon a daemon is configured with, and
// the bound keeps one record from allocating without limit below
// max_record_bytes (a row of one value costs 4 bytes of JSON, 8 of memory).
const MaxFutureRows = 10000

// Fields names the JSON fields of a record.
type Fields struct {
	Series, T, Y, U string
	// Future names the field of the planned inputs of the steps ahead; ""
	// = records carry none (the field is not read).
	Future string
}

// DefaultFields are the field names of docs/messages.md.
var DefaultFields = Fields{Series: "series", T: "t", Y: "y", U: "u", Future: "future"}

// Decoder decodes record values. The zero value is not usable: set Fields
// (DefaultFields) and MaxBytes.
type Decoder struct {
	Fields Fields
	// MaxBytes bounds a record value; larger ones are rejected unread.
	MaxBytes int
	// MaxSeriesBytes bounds a series id (it is a state topic key, a log
	// field and an API path); 0 means DefaultMaxSeriesBytes.
	MaxSeriesBytes int
	// Inputs is the number of exogenous inputs every record must carry
	// (absent u means none); negative: any number (the series' model checks).
	Inputs int
	// Planned is the number of values of every row of future (the planned
	// inputs); negative: any number, the same in every row (the series'
	// model checks).
	Planned int
	// Unit is what an integer t is: a sequence number (the zero value) or
	// a Unix time in ms or s (calendar.ParseTime).
	Unit calendar.Unit
}

// Record is a decoded, validated input record.
//
// A series' t must be of one kind throughout: sequence numbers (an order
// with no calendar) or times (Unix milliseconds, which calendar features
// read). With Unit Sequence an integer t is a sequence number and a
// timestamp string a time; with Unit ms or s both are times.
type Record struct {
	Series string
	// T is the sample's time: with IsTime, Unix milliseconds (of an RFC
	// 3339 time, a date, an integer t in the unit ms or s, or, without t,
	// the record timestamp); else the integer t itself, a sequence number.
	T int64
	// IsTime says T is a time in Unix milliseconds, not a sequence number.
	IsTime bool
	// UnixInteger says t was an integer read as a Unix time in Unit (ms
	// or s), not a timestamp string or the record's time: the one kind of
	// t whose unit the data cannot confirm (calendar.UnitHint).
	UnixInteger bool
	Y           float64
	U           []float64
	// Future holds the planned inputs of the steps ahead: row h-1 those of
	// time t + h·step (h = 1, 2, …, step the series' sampling step), each
	// row Planned values in the order the model declares its planned
	// inputs. nil when the record has none (future absent, null or []).
	Future [][]float64
}

// Decode decodes a record value with its Kafka key and timestamp. A rejected
// record returns a *reject.Error (errors.Is(err, reject.ErrRejected)); a returned
// Record always has a non-empty series, a finite y, Inputs finite inputs
// and at most MaxFutureRows rows of Planned finite values.
//
// t is read with calendar's parser: a JSON number must be an integer, in
// Unit (a sequence number, or Unix ms or s); a JSON string must be a
// timestamp (calendar.ParseTimestamp: RFC 3339, or in UTC a time without a
// zone, a date YYYY-MM-DD or a month YYYY-MM), whatever the Unit, and a
// string holding an integer is not one. Seconds that overflow int64
// milliseconds are rejected.
//
// It reads the value in place: json.Valid checks the whole document (so
// nothing after the object passes, as with json.Unmarshal), then one scan
// finds the fields, the last of a repeated name winning, as in a map. An
// accepted record allocates its series (when it comes from the field or the
// key), its inputs and its future rows (two allocations), nothing else;
// decoding into a map allocated about 1 KB a record, half the daemon's live
// allocations.
func (d *Decoder) Decode(key, value []byte, ts time.Time) (Record, error) {
	if d.MaxBytes > 0 && len(value) > d.MaxBytes {
		return Record{}, reject.Errorf(reject.Oversize, "%d bytes, limit %d", len(value), d.MaxBytes)
	}
	if !json.Valid(value) {
		var v any // only for the message: a rejected record may allocate
		return Record{}, reject.Errorf(reject.InvalidJSON, "%v", errOr(json.Unmarshal(value, &v), "not valid JSON"))
	}
	var series, t, y, u, future []byte // raw values; nil: absent
	obj := objectScanner{doc: value}
	if !obj.open() {
		return Record{}, reject.Errorf(reject.InvalidJSON, "not an object")
	}
	for obj.next() {
		switch {
		case obj.keyIs(d.Fields.Series):
			series = obj.value
		case obj.keyIs(d.Fields.T):
			t = obj.value
		case obj.keyIs(d.Fields.Y):
			y = obj.value
		case obj.keyIs(d.Fields.U):
			u = obj.value
		case d.Fields.Future != "" && obj.keyIs(d.Fields.Future):
			future = obj.value
		}
	}
	var rec Record
	if present(series) {
		var ok bool
		if rec.Series, ok = jsonString(series); !ok {
			return Record{}, reject.Errorf(reject.MissingSeries, "%s is not a string", d.Fields.Series)
		}
		// The key decides the partition, and a series must be read from one
		// partition only (one Learner): a series field may not differ
		// from a key.
		if len(key) > 0 && rec.Series != "" && string(key) != rec.Series {
			return Record{}, reject.Errorf(reject.SeriesKey, "%s %s under the key %s; key the record by its series id",
				d.Fields.Series, quoteShort(rec.Series), quoteShort(string(key)))
		}
	} else {
		rec.Series = string(key)
	}
	if rec.Series == "" && present(series) {
		return Record{}, reject.Errorf(reject.MissingSeries, "%s is empty", d.Fields.Series)
	}
	if rec.Series == "" {
		return Record{}, reject.Errorf(reject.MissingSeries, "no %s field and no key", d.Fields.Series)
	}
	if err := d.checkSeries(rec.Series); err != nil {
		return Record{}, err
	}
	if y == nil {
		return Record{}, reject.Errorf(reject.MissingY, "no %s field", d.Fields.Y)
	}
	var err error
	if rec.Y, err = finiteNumber(y); err != nil {
		reason := reject.BadY
		if nonFiniteString(y) || looksNumeric(y) {
			reason = reject.NonFiniteY
		}
		return Record{}, reject.Errorf(reason, "%s: %v", d.Fields.Y, err)
	}
	if present(u) {
		n, ok := arrayLen(u)
		if !ok {
			return Record{}, reject.Errorf(reject.BadInputs, "%s is not an array", d.Fields.U)
		}
		if d.Inputs >= 0 && n != d.Inputs {
			return Record{}, reject.Errorf(reject.BadInputs, "%d inputs, want %d", n, d.Inputs)
		}
		rec.U = make([]float64, n)
		elems := arrayScanner{doc: u}
		for i := 0; elems.next(); i++ {
			if rec.U[i], err = finiteNumber(elems.value); err != nil {
				return Record{}, reject.Errorf(reject.NonFiniteInput, "%s[%d]: %v", d.Fields.U, i, err)
			}
		}
	} else if d.Inputs > 0 {
		return Record{}, reject.Errorf(reject.BadInputs, "no %s field, want %d inputs", d.Fields.U, d.Inputs)
	}
	if present(future) {
		if rec.Future, err = d.futureRows(future); err != nil {
			return Record{}, err
		}
	}
	rec.T, rec.IsTime = ts.UnixMilli(), true
	if present(t) {
		if rec.T, rec.IsTime, err = d.parseTime(t); err != nil {
			return Record{}, reject.Errorf(reject.BadTime, "%s: %v", d.Fields.T, err)
		}
		rec.UnixInteger = rec.IsTime && t[0] != '"' // a number, not a timestamp string
	}
	return rec, nil
}

// futureRows decodes the raw future field, present and not null: first
// its shape (an array of at most MaxFutureRows arrays of Planned values, or
// of one width when Planned < 0: reject.BadFuture), then the values
// (reject.NonFiniteFuture), so that the reason does not depend on which row
// comes first. The rows share one backing array.
func (d *Decoder) futureRows(raw []byte) ([][]float64, error) {
	f := d.Fields.Future
	n, ok := arrayLen(raw)
	switch {
	case !ok:
		return nil, reject.Errorf(reject.BadFuture, "%s is not an array of rows", f)
	case n > MaxFutureRows:
		return nil, reject.Errorf(reject.BadFuture, "%s has %d rows, at most %d", f, n, MaxFutureRows)
	case n == 0:
		return nil, nil
	}
	width := d.Planned
	rows := arrayScanner{doc: raw}
	for h := 0; rows.next(); h++ {
		w, ok := arrayLen(rows.value)
		switch {
		case !ok:
			return nil, reject.Errorf(reject.BadFuture, "%s[%d] is not an array", f, h)
		case width < 0:
			width = w
		case w != width && d.Planned >= 0:
			return nil, reject.Errorf(reject.BadFuture, "%s[%d] has %d values, want %d planned inputs", f, h, w, width)
		case w != width:
			return nil, reject.Errorf(reject.BadFuture, "%s[%d] has %d values, %s[0] has %d", f, h, w, f, width)
		}
	}
	vals := make([]float64, n*width)
	out := make([][]float64, n)
	rows = arrayScanner{doc: raw}
	for h := 0; rows.next(); h++ {
		out[h] = vals[h*width : (h+1)*width : (h+1)*width]
		elems := arrayScanner{doc: rows.value}
		for i := 0; elems.next(); i++ {
			v, err := finiteNumber(elems.value)
			if err != nil {
				return nil, reject.Errorf(reject.NonFiniteFuture, "%s[%d][%d]: %v", f, h, i, err)
			}
			out[h][i] = v
		}
	}
	return out, nil
}

// checkSeries rejects an id longer than MaxSeriesBytes, not UTF-8, or
// holding a control character (NUL, newline, an ANSI escape…), which would
// garble the logs, the web view and the state topic's keys.
func (d *Decoder) checkSeries(id string) error {
	limit := d.MaxSeriesBytes
	if limit <= 0 {
		limit = DefaultMaxSeriesBytes
	}
	if len(id) > limit {
		return reject.Errorf(reject.BadSeries, "series id of %d bytes, limit %d: %s…", len(id), limit, quoteShort(id))
	}
	if !utf8.ValidString(id) {
		return reject.Errorf(reject.BadSeries, "series id %s is not UTF-8", quoteShort(id))
	}
	for i, r := range id {
		if unicode.IsControl(r) {
			return reject.Errorf(reject.BadSeries, "series id %s has a control character (%U) at byte %d", quoteShort(id), r, i)
		}
	}
	return nil
}

// quoteShort quotes s, or its first 64 bytes, for a reject's detail.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.QuoteToASCII(s)
}

// nonFiniteString reports whether raw is a JSON string that names a
// non-finite number, as some producers write NaN and infinities.
func nonFiniteString(raw []byte) bool {
	s, ok := jsonString(raw)
	if !ok {
		return false
	}
	switch s {
	case "NaN", "nan", "Inf", "+Inf", "-Inf", "inf", "-inf", "Infinity", "-Infinity", "+Infinity":
		return true
	}
	return false
}

// looksNumeric reports whether raw is a JSON number (which finiteNumber
// rejects only for overflowing).
func looksNumeric(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9')
}

// present reports whether a field's raw value is there and not null, which
// counts as absent.
func present(raw []byte) bool { return raw != nil && string(raw) != "null" }

func errOr(err error, msg string) any {
	if err != nil {
		return err
	}
	return msg
}

// finiteNumber parses a JSON number into a finite float64. raw comes from a
// valid JSON document, so anything but a string, literal, array or object is a
// JSON number, whose syntax ParseFloat accepts; overflow (1e999) is an error.
func finiteNumber(raw []byte) (float64, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || !(t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
		return 0, fmt.Errorf("%s is not a number", t)
	}
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s is not a finite float64", t)
	}
	return v, nil
}

// parseTime reads a present t: a JSON string holds a timestamp, anything
// else must be an integer in d.Unit (calendar.ParseTime). The string(raw)
// conversion does not allocate: ParseTime keeps no reference to it.
func (d *Decoder) parseTime(raw []byte) (t int64, isTime bool, err error) {
	if s, ok := jsonString(raw); ok {
		t, err = calendar.ParseTimestamp(s)
		return t, err == nil, err
	}
	return calendar.ParseTime(string(raw), d.Unit)
}
