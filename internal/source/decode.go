// Package source decodes and validates the input records of the daemon
// (DESIGN §4). It knows the message format, not Kafka: a record is a key, a
// value and a timestamp.
package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Reason is why a record was rejected. The set is closed, so it can label a
// metric without unbounded cardinality.
type Reason string

// The reject reasons. A record is checked in this order; the first failure
// names it.
const (
	ReasonOversize       Reason = "oversize"         // value larger than the configured limit
	ReasonInvalidJSON    Reason = "invalid_json"     // not a JSON object
	ReasonMissingSeries  Reason = "missing_series"   // no series field and no key
	ReasonMissingY       Reason = "missing_y"        // no y field
	ReasonNonFiniteY     Reason = "non_finite_y"     // y not a finite number (NaN, ±Inf, overflow, a string)
	ReasonBadInputs      Reason = "bad_inputs"       // u not an array of numbers, or the wrong length
	ReasonNonFiniteInput Reason = "non_finite_input" // an input not finite
	ReasonBadTime        Reason = "bad_time"         // t neither an integer nor an RFC 3339 time
)

// Reasons lists every Reason, for pre-creating metric series.
var Reasons = []Reason{ReasonOversize, ReasonInvalidJSON, ReasonMissingSeries, ReasonMissingY,
	ReasonNonFiniteY, ReasonBadInputs, ReasonNonFiniteInput, ReasonBadTime}

// ErrRejected is wrapped by every RejectError.
var ErrRejected = errors.New("record rejected")

// RejectError says why a record was rejected.
type RejectError struct {
	Reason Reason
	Detail string
}

func (e *RejectError) Error() string { return fmt.Sprintf("%s: %s", e.Reason, e.Detail) }

// Unwrap makes errors.Is(err, ErrRejected) true.
func (e *RejectError) Unwrap() error { return ErrRejected }

func reject(r Reason, format string, args ...any) error {
	return &RejectError{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// Fields names the JSON fields of a record.
type Fields struct {
	Series, T, Y, U string
}

// DefaultFields are the field names of DESIGN §4.
var DefaultFields = Fields{Series: "series", T: "t", Y: "y", U: "u"}

// Decoder decodes record values. The zero value is not usable: set Fields
// (DefaultFields) and MaxBytes.
type Decoder struct {
	Fields Fields
	// MaxBytes bounds a record value; larger ones are rejected unread.
	MaxBytes int
	// Inputs is the number of exogenous inputs every record must carry
	// (absent u means none); negative: any number (the series' model checks).
	Inputs int
}

// Record is a decoded, validated input record.
type Record struct {
	Series string
	// T is the sample's time: the integer t of the record, the RFC 3339 t in
	// Unix milliseconds, or, without t, the record timestamp in Unix
	// milliseconds.
	T int64
	Y float64
	U []float64
}

// Decode decodes a record value with its Kafka key and timestamp. A rejected
// record returns a *RejectError (errors.Is(err, ErrRejected)); a returned
// Record always has a non-empty series, a finite y and Inputs finite inputs.
//
// It reads the value in place: json.Valid checks the whole document (so
// nothing after the object passes, as with json.Unmarshal), then one scan
// finds the fields, the last of a repeated name winning, as in a map. An
// accepted record allocates its series (when it comes from the field or the
// key) and its inputs, nothing else; decoding into a map allocated about
// 1 KB a record, half the daemon's live allocations.
func (d *Decoder) Decode(key, value []byte, ts time.Time) (Record, error) {
	if d.MaxBytes > 0 && len(value) > d.MaxBytes {
		return Record{}, reject(ReasonOversize, "%d bytes, limit %d", len(value), d.MaxBytes)
	}
	if !json.Valid(value) {
		var v any // only for the message: a rejected record may allocate
		return Record{}, reject(ReasonInvalidJSON, "%v", errOr(json.Unmarshal(value, &v), "not valid JSON"))
	}
	var series, t, y, u []byte // raw values; nil: absent
	obj := objectScanner{doc: value}
	if !obj.open() {
		return Record{}, reject(ReasonInvalidJSON, "not an object")
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
		}
	}
	var rec Record
	if present(series) {
		var ok bool
		if rec.Series, ok = jsonString(series); !ok {
			return Record{}, reject(ReasonMissingSeries, "%s is not a string", d.Fields.Series)
		}
	} else if utf8.Valid(key) {
		rec.Series = string(key)
	}
	if rec.Series == "" {
		return Record{}, reject(ReasonMissingSeries, "no %s field and no key", d.Fields.Series)
	}
	if y == nil {
		return Record{}, reject(ReasonMissingY, "no %s field", d.Fields.Y)
	}
	var err error
	if rec.Y, err = finiteNumber(y); err != nil {
		return Record{}, reject(ReasonNonFiniteY, "%s: %v", d.Fields.Y, err)
	}
	if present(u) {
		n, ok := arrayLen(u)
		if !ok {
			return Record{}, reject(ReasonBadInputs, "%s is not an array", d.Fields.U)
		}
		if d.Inputs >= 0 && n != d.Inputs {
			return Record{}, reject(ReasonBadInputs, "%d inputs, want %d", n, d.Inputs)
		}
		rec.U = make([]float64, n)
		elems := arrayScanner{doc: u}
		for i := 0; elems.next(); i++ {
			if rec.U[i], err = finiteNumber(elems.value); err != nil {
				return Record{}, reject(ReasonNonFiniteInput, "%s[%d]: %v", d.Fields.U, i, err)
			}
		}
	} else if d.Inputs > 0 {
		return Record{}, reject(ReasonBadInputs, "no %s field, want %d inputs", d.Fields.U, d.Inputs)
	}
	rec.T = ts.UnixMilli()
	if present(t) {
		if rec.T, err = parseTime(t); err != nil {
			return Record{}, reject(ReasonBadTime, "%s: %v", d.Fields.T, err)
		}
	}
	return rec, nil
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

// parseTime accepts an integer (a sequence number or Unix milliseconds) or an
// RFC 3339 string (returned in Unix milliseconds).
func parseTime(raw []byte) (int64, error) {
	if s, ok := jsonString(raw); ok {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Errorf("%q is not RFC 3339", s)
		}
		return t.UnixMilli(), nil
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer", raw)
	}
	return v, nil
}
