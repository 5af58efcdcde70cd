package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// referenceDecode is the decoder as it was before it scanned values in
// place: json.Unmarshal into a map of raw fields, then each field decoded
// by encoding/json. FuzzDecode checks Decode against it: the same record
// or the same reason, for any key and value.
func referenceDecode(d *Decoder, key, value []byte, ts time.Time) (Record, error) {
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
		if rec.T, err = referenceParseTime(raw); err != nil {
			return Record{}, reject(ReasonBadTime, "%s: %v", d.Fields.T, err)
		}
	}
	return rec, nil
}

func referenceParseTime(raw json.RawMessage) (int64, error) {
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
