package sink

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// AppendJSON appends m's JSON encoding to b: byte for byte what
// encoding/json's Marshal writes of the same fields (TestAppendJSONMatchesMarshal
// and FuzzAppendJSON hold it to that), in half the time and without
// allocating (BenchmarkEncodeForecast; Marshal was a visible share of the
// daemon's CPU: docs/benchmarks.md), except
// that a NaN or infinite number, which JSON lacks, is written as null: a
// ruined model's message is still published and read, rather than failing
// its partition's writes for ever. It fails only on a time outside years
// 0–9999.
func (m *Message) AppendJSON(b []byte) ([]byte, error) {
	w := jsonWriter{b: b}
	w.raw(`{"series":`)
	w.b = appendString(w.b, m.Series)
	w.int(`,"t":`, m.T)
	w.time(`,"issued_at":`, m.IssuedAt)
	if o := m.Observed; o != nil {
		w.float(`,"observed":{"y":`, o.Y)
		w.float(`,"prediction":`, o.Prediction)
		w.float(`,"std":`, o.Std)
		w.float(`,"residual":`, o.Residual)
		w.float(`,"weight":`, o.Weight)
		w.raw(`,"outlier":`)
		w.b = strconv.AppendBool(w.b, o.Outlier)
		if o.DF != 0 { // omitempty
			w.float(`,"df":`, o.DF)
		}
		if o.Fallback { // omitempty
			w.raw(`,"fallback":true`)
		}
		w.raw("}")
	}
	w.raw(`,"steps":`)
	if m.Steps == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, s := range m.Steps {
			if i > 0 {
				w.raw(",")
			}
			w.int(`{"h":`, int64(s.H))
			w.int(`,"t":`, s.T)
			w.float(`,"mean":`, s.Mean)
			w.float(`,"std":`, s.Std)
			w.float(`,"lo":`, s.Lo)
			w.float(`,"hi":`, s.Hi)
			if s.Fallback { // omitempty
				w.raw(`,"fallback":true`)
			}
			w.raw("}")
		}
		w.raw("]")
	}
	w.raw(`,"model":`)
	w.model(&m.Model)
	w.raw("}")
	return w.b, w.err
}

// MarshalJSON is AppendJSON: encoding/json (the HTTP API) writes what the
// forecast topic carries, non-finite numbers as null.
func (m *Message) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil) }

// MarshalJSON writes mi as encoding/json would, non-finite numbers as null.
func (mi ModelInfo) MarshalJSON() ([]byte, error) {
	w := jsonWriter{}
	w.model(&mi)
	return w.b, w.err
}

// ints appends a list of integers as encoding/json would: null for nil.
func (w *jsonWriter) ints(ls []int) {
	if ls == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i, l := range ls {
		if i > 0 {
			w.raw(",")
		}
		w.b = strconv.AppendInt(w.b, int64(l), 10)
	}
	w.raw("]")
}

// model appends mi's JSON object.
func (w *jsonWriter) model(mi *ModelInfo) {
	w.int(`{"m":`, int64(mi.M))
	w.raw(`,"lags":`)
	w.ints(mi.Lags)
	if len(mi.InputLags) > 0 {
		w.raw(`,"input_lags":[`)
		for i, ls := range mi.InputLags {
			if i > 0 {
				w.raw(",")
			}
			w.ints(ls)
		}
		w.raw("]")
	}
	w.raw(`,"kernel":`)
	w.b = appendString(w.b, mi.Kernel)
	w.raw(`,"form":`)
	w.b = appendString(w.b, mi.Form)
	if mi.Sigma2 != 0 { // omitempty
		w.float(`,"sigma2":`, mi.Sigma2)
	}
	w.float(`,"gamma":`, mi.Gamma)
	w.float(`,"noise_std":`, mi.NoiseStd)
	w.float(`,"d_eff":`, mi.DEff)
	w.int(`,"swaps":`, int64(mi.Swaps))
	if mi.DF != 0 { // omitempty
		w.float(`,"df":`, mi.DF)
	}
	w.raw(`,"combine":`)
	w.b = appendString(w.b, mi.Combine)
	if th := mi.Theta; th != nil { // omitempty
		w.float(`,"theta":{"alpha":`, th.Alpha)
		w.float(`,"drift":`, th.Drift)
		w.float(`,"slope_share":`, th.SlopeShare)
		if th.Phi != 0 { // omitempty
			w.float(`,"phi":`, th.Phi)
		}
		if th.SeasonSmoothing != nil { // omitempty
			w.float(`,"season_smoothing":`, *th.SeasonSmoothing)
		}
		for i, a := range th.AR { // omitempty
			sep := ","
			if i == 0 {
				sep = `,"ar":[`
			}
			w.float(sep, a)
		}
		if len(th.AR) > 0 {
			w.raw("]")
		}
		w.int(`,"period":`, int64(th.Period))
		if th.Additive { // omitempty
			w.raw(`,"additive":true`)
		}
		if th.Profile != 0 { // omitempty
			w.int(`,"profile":`, int64(th.Profile))
		}
		if th.Growth != nil { // omitempty
			w.float(`,"growth":`, *th.Growth)
		}
		w.float(`,"model_weight":`, th.ModelWeight)
		w.float(`,"df":`, th.DF)
		w.raw("}")
	}
	if mi.BandScale != 0 { // omitempty
		w.float(`,"band_scale":`, mi.BandScale)
	}
	if mi.LevelShift != 0 { // omitempty
		w.float(`,"level_shift":`, mi.LevelShift)
	}
	if len(mi.DaysOff) > 0 { // omitempty
		w.raw(`,"days_off":[`)
		for i, d := range mi.DaysOff {
			if i > 0 {
				w.raw(",")
			}
			w.b = appendString(w.b, d)
		}
		w.raw("]")
	}
	if len(mi.WorkingMinutes) > 0 { // omitempty
		w.raw(`,"working_minutes":[`)
		for i, m := range mi.WorkingMinutes {
			if i > 0 {
				w.raw(",")
			}
			w.b = strconv.AppendInt(w.b, int64(m), 10)
		}
		w.raw("]")
	}
	w.raw("}")
}

// jsonWriter appends to b and keeps the first error.
type jsonWriter struct {
	b   []byte
	err error
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) int(name string, v int64) {
	w.b = strconv.AppendInt(append(w.b, name...), v, 10)
}

func (w *jsonWriter) float(name string, v float64) {
	w.b = append(w.b, name...)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.b = append(w.b, "null"...)
		return
	}
	w.b, _ = appendFloat(w.b, v)
}

func (w *jsonWriter) time(name string, t time.Time) {
	var err error
	w.b, err = appendTime(append(w.b, name...), t)
	if w.err == nil {
		w.err = err
	}
}

// appendFloat formats f as encoding/json does: the shortest representation,
// in exponent form below 1e-6 and from 1e21 on, with the exponent's leading
// zero dropped (1e-07 → 1e-7).
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString appends s quoted. Printable ASCII without the characters
// encoding/json escapes (quote, backslash and, for HTML, < > &) is copied;
// anything else is left to encoding/json, whose escaping rules are many.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

var errYearRange = errors.New("json: Time.MarshalJSON: year outside of range [0,9999]")

// appendTime appends t as time.Time's MarshalJSON does: RFC 3339 with
// nanoseconds, quoted.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, errYearRange
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}
