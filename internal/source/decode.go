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
func (d *Decoder) Decode(key, value []byte, ts time.Time) (Record, error) {
	if d.MaxBytes > 0 && len(value) > d.MaxBytes {
		return Record{}, reject(ReasonOversize, "%d bytes, limit %d", len(value), d.MaxBytes)
	}
	var obj map[string]json.RawMessage
	// Unmarshal, unlike a Decoder, rejects anything after the object.
	if err := json.Unmarshal(value, &obj); err != nil || obj == nil {
		return Record{}, reject(ReasonInvalidJSON, "%v", errOr(err, "not an object"))
	}
	present := func(field string) (json.RawMessage, bool) { // null counts as absent
		raw, ok := obj[field]
		return raw, ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	}
	var rec Record
	if raw, ok := present(d.Fields.Series); ok {
		if err := json.Unmarshal(raw, &rec.Series); err != nil {
			return Record{}, reject(ReasonMissingSeries, "%s is not a string", d.Fields.Series)
		}
	} else if utf8.Valid(key) {
		rec.Series = string(key)
	}
	if rec.Series == "" {
		return Record{}, reject(ReasonMissingSeries, "no %s field and no key", d.Fields.Series)
	}
	raw, ok := obj[d.Fields.Y]
	if !ok {
		return Record{}, reject(ReasonMissingY, "no %s field", d.Fields.Y)
	}
	y, err := finiteNumber(raw)
	if err != nil {
		return Record{}, reject(ReasonNonFiniteY, "%s: %v", d.Fields.Y, err)
	}
	rec.Y = y
	if raw, ok := present(d.Fields.U); ok {
		var us []json.RawMessage
		if err := json.Unmarshal(raw, &us); err != nil {
			return Record{}, reject(ReasonBadInputs, "%s is not an array", d.Fields.U)
		}
		if d.Inputs >= 0 && len(us) != d.Inputs {
			return Record{}, reject(ReasonBadInputs, "%d inputs, want %d", len(us), d.Inputs)
		}
		rec.U = make([]float64, len(us))
		for i, r := range us {
			if rec.U[i], err = finiteNumber(r); err != nil {
				return Record{}, reject(ReasonNonFiniteInput, "%s[%d]: %v", d.Fields.U, i, err)
			}
		}
	} else if d.Inputs > 0 {
		return Record{}, reject(ReasonBadInputs, "no %s field, want %d inputs", d.Fields.U, d.Inputs)
	}
	rec.T = ts.UnixMilli()
	if raw, ok := present(d.Fields.T); ok {
		if rec.T, err = parseTime(raw); err != nil {
			return Record{}, reject(ReasonBadTime, "%s: %v", d.Fields.T, err)
		}
	}
	return rec, nil
}

func errOr(err error, msg string) any {
	if err != nil {
		return err
	}
	return msg
}

// finiteNumber parses a JSON number into a finite float64. raw comes from a
// valid JSON document, so anything but a string, literal, array or object is a
// JSON number, whose syntax ParseFloat accepts; overflow (1e999) is an error.
func finiteNumber(raw json.RawMessage) (float64, error) {
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
func parseTime(raw json.RawMessage) (int64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
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
