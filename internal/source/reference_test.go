package source

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/reject"
)

// referenceDecode is the decoder as it was before it scanned values in
// place: json.Unmarshal into a map of raw fields, then each field decoded
// by encoding/json. FuzzDecode checks Decode against it: the same record
// or the same reason, for any key and value.
func referenceDecode(d *Decoder, key, value []byte, ts time.Time) (Record, error) {
	if d.MaxBytes > 0 && len(value) > d.MaxBytes {
		return Record{}, reject.Errorf(reject.Oversize, "%d bytes, limit %d", len(value), d.MaxBytes)
	}
	var obj map[string]json.RawMessage
	// Unmarshal, unlike a Decoder, rejects anything after the object.
	if err := json.Unmarshal(value, &obj); err != nil || obj == nil {
		return Record{}, reject.Errorf(reject.InvalidJSON, "%v", errOr(err, "not an object"))
	}
	present := func(field string) (json.RawMessage, bool) { // null counts as absent
		raw, ok := obj[field]
		return raw, ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	}
	var rec Record
	if raw, ok := present(d.Fields.Series); ok {
		if err := json.Unmarshal(raw, &rec.Series); err != nil {
			return Record{}, reject.Errorf(reject.MissingSeries, "%s is not a string", d.Fields.Series)
		}
		if len(key) > 0 && rec.Series != "" && string(key) != rec.Series {
			return Record{}, reject.Errorf(reject.SeriesKey, "series field differs from the key")
		}
	} else {
		rec.Series = string(key)
	}
	if rec.Series == "" {
		return Record{}, reject.Errorf(reject.MissingSeries, "no %s field and no key", d.Fields.Series)
	}
	limit := d.MaxSeriesBytes
	if limit <= 0 {
		limit = DefaultMaxSeriesBytes
	}
	if len(rec.Series) > limit || !utf8.ValidString(rec.Series) || strings.IndexFunc(rec.Series, unicode.IsControl) >= 0 {
		return Record{}, reject.Errorf(reject.BadSeries, "bad series id")
	}
	raw, ok := obj[d.Fields.Y]
	if !ok {
		return Record{}, reject.Errorf(reject.MissingY, "no %s field", d.Fields.Y)
	}
	var yv any
	json.Unmarshal(raw, &yv)
	y, err := finiteNumber(raw)
	switch v := yv.(type) {
	case string:
		if err == nil || !slices.Contains([]string{"NaN", "nan", "Inf", "+Inf", "-Inf", "inf", "-inf", "Infinity", "-Infinity", "+Infinity"}, v) {
			return Record{}, reject.Errorf(reject.BadY, "not a number")
		}
		return Record{}, reject.Errorf(reject.NonFiniteY, "not finite")
	case float64, nil:
		if err != nil && yv == nil && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return Record{}, reject.Errorf(reject.BadY, "null")
		}
		if err != nil {
			return Record{}, reject.Errorf(reject.NonFiniteY, "%s: %v", d.Fields.Y, err) // an overflow Unmarshal refuses
		}
	default:
		return Record{}, reject.Errorf(reject.BadY, "not a number")
	}
	rec.Y = y
	if raw, ok := present(d.Fields.U); ok {
		var us []json.RawMessage
		if err := json.Unmarshal(raw, &us); err != nil {
			return Record{}, reject.Errorf(reject.BadInputs, "%s is not an array", d.Fields.U)
		}
		if d.Inputs >= 0 && len(us) != d.Inputs {
			return Record{}, reject.Errorf(reject.BadInputs, "%d inputs, want %d", len(us), d.Inputs)
		}
		rec.U = make([]float64, len(us))
		for i, r := range us {
			if rec.U[i], err = finiteNumber(r); err != nil {
				return Record{}, reject.Errorf(reject.NonFiniteInput, "%s[%d]: %v", d.Fields.U, i, err)
			}
		}
	} else if d.Inputs > 0 {
		return Record{}, reject.Errorf(reject.BadInputs, "no %s field, want %d inputs", d.Fields.U, d.Inputs)
	}
	if raw, ok := present(d.Fields.Future); ok && d.Fields.Future != "" {
		if rec.Future, err = referenceFuture(d, raw); err != nil {
			return Record{}, err
		}
	}
	rec.T, rec.IsTime = ts.UnixMilli(), true
	if raw, ok := present(d.Fields.T); ok {
		if rec.T, rec.IsTime, err = referenceParseTime(d, raw); err != nil {
			return Record{}, reject.Errorf(reject.BadTime, "%s: %v", d.Fields.T, err)
		}
	}
	return rec, nil
}

// referenceFuture decodes future with encoding/json: the shape of every row
// first, then the values.
func referenceFuture(d *Decoder, raw json.RawMessage) ([][]float64, error) {
	f := d.Fields.Future
	isArray := func(r json.RawMessage) bool { // Unmarshal leaves a nil slice for null
		t := bytes.TrimSpace(r)
		return len(t) > 0 && t[0] == '['
	}
	var rows []json.RawMessage
	if !isArray(raw) || json.Unmarshal(raw, &rows) != nil {
		return nil, reject.Errorf(reject.BadFuture, "%s is not an array of rows", f)
	}
	if len(rows) > MaxFutureRows {
		return nil, reject.Errorf(reject.BadFuture, "%s has %d rows, at most %d", f, len(rows), MaxFutureRows)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	cells := make([][]json.RawMessage, len(rows))
	for h, r := range rows {
		if !isArray(r) || json.Unmarshal(r, &cells[h]) != nil {
			return nil, reject.Errorf(reject.BadFuture, "%s[%d] is not an array", f, h)
		}
		want := d.Planned
		if want < 0 {
			want = len(cells[0])
		}
		if len(cells[h]) != want {
			return nil, reject.Errorf(reject.BadFuture, "%s[%d] has %d values, want %d", f, h, len(cells[h]), want)
		}
	}
	out := make([][]float64, len(rows))
	for h, row := range cells {
		out[h] = make([]float64, len(row))
		for i, c := range row {
			v, err := finiteNumber(c)
			if err != nil {
				return nil, reject.Errorf(reject.NonFiniteFuture, "%s[%d][%d]: %v", f, h, i, err)
			}
			out[h][i] = v
		}
	}
	return out, nil
}

// referenceParseTime: a JSON string is a timestamp, anything else an
// integer in the decoder's unit, by calendar's parser (the one the daemon
// and backtest share; it has its own fuzz test).
func referenceParseTime(d *Decoder, raw json.RawMessage) (int64, bool, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		t, err := calendar.ParseTimestamp(s)
		return t, err == nil, err
	}
	return calendar.ParseTime(string(bytes.TrimSpace(raw)), d.Unit)
}
