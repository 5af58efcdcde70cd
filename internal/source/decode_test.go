package source

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

var ts = time.UnixMilli(1_700_000_000_000)

func decoder() *Decoder { return &Decoder{Fields: DefaultFields, MaxBytes: 256, Inputs: 1} }

func TestDecodeAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             Record
	}{
		{"full", "", `{"series":"s1","t":1037,"y":86.0,"u":[0.3]}`, Record{Series: "s1", T: 1037, Y: 86, U: []float64{0.3}}},
		{"key names the series", "s2", `{"t":5,"y":-1e-3,"u":[1]}`, Record{Series: "s2", T: 5, Y: -0.001, U: []float64{1}}},
		{"field wins over key", "k", `{"series":"s3","t":1,"y":1,"u":[2]}`, Record{Series: "s3", T: 1, Y: 1, U: []float64{2}}},
		{"rfc3339 time", "s", `{"t":"2026-11-21T10:00:00.5Z","y":2,"u":[0]}`, Record{Series: "s", T: time.Date(2026, 11, 21, 10, 0, 0, 5e8, time.UTC).UnixMilli(), Y: 2, U: []float64{0}}},
		{"no t: record timestamp", "s", `{"y":3,"u":[0]}`, Record{Series: "s", T: ts.UnixMilli(), Y: 3, U: []float64{0}}},
		{"unknown fields ignored", "s", `{"y":3,"u":[0],"t":1,"note":"x"}`, Record{Series: "s", T: 1, Y: 3, U: []float64{0}}},
		{"null series and t are absent", "k", `{"series":null,"t":null,"y":3,"u":[0]}`, Record{Series: "k", T: ts.UnixMilli(), Y: 3, U: []float64{0}}},
	} {
		got, err := decoder().Decode([]byte(tc.key), []byte(tc.value), ts)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.Series != tc.want.Series || got.T != tc.want.T || got.Y != tc.want.Y || len(got.U) != len(tc.want.U) || got.U[0] != tc.want.U[0] {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The bad-input table of issue 5: each is rejected with its reason.
func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		reason           Reason
	}{
		{"invalid json", "s", `{"y":1,`, ReasonInvalidJSON},
		{"not an object", "s", `[1,2]`, ReasonInvalidJSON},
		{"trailing data", "s", `{"y":1,"u":[0]} {}`, ReasonInvalidJSON},
		{"trailing bracket", "s", `{"y":1,"u":[0]}]`, ReasonInvalidJSON},
		{"missing y", "s", `{"t":1,"u":[0]}`, ReasonMissingY},
		{"y NaN string", "s", `{"y":"NaN","u":[0]}`, ReasonNonFiniteY},
		{"y overflows to Inf", "s", `{"y":1e999,"u":[0]}`, ReasonNonFiniteY},
		{"y null", "s", `{"y":null,"u":[0]}`, ReasonNonFiniteY},
		{"wrong u length", "s", `{"y":1,"u":[0,1]}`, ReasonBadInputs},
		{"u missing", "s", `{"y":1}`, ReasonBadInputs},
		{"u not an array", "s", `{"y":1,"u":3}`, ReasonBadInputs},
		{"u overflows", "s", `{"y":1,"u":[-1e400]}`, ReasonNonFiniteInput},
		{"bad t", "s", `{"y":1,"u":[0],"t":"yesterday"}`, ReasonBadTime},
		{"fractional t", "s", `{"y":1,"u":[0],"t":1.5}`, ReasonBadTime},
		{"no key and no series", "", `{"y":1,"u":[0]}`, ReasonMissingSeries},
		{"series not a string", "s", `{"series":7,"y":1,"u":[0]}`, ReasonMissingSeries},
		{"oversize", "s", `{"y":1,"u":[0],"pad":"` + strings.Repeat("x", 300) + `"}`, ReasonOversize},
	} {
		_, err := decoder().Decode([]byte(tc.key), []byte(tc.value), ts)
		var re *RejectError
		if !errors.As(err, &re) || !errors.Is(err, ErrRejected) {
			t.Errorf("%s: accepted or untyped error %v", tc.name, err)
			continue
		}
		if re.Reason != tc.reason {
			t.Errorf("%s: reason %s, want %s (%v)", tc.name, re.Reason, tc.reason, err)
		}
	}
}

// FuzzDecode: no input panics, every error is a RejectError with a known
// reason, an accepted record is valid, and Decode agrees with
// referenceDecode (encoding/json all the way) on the record or the reason,
// with one input required and with any number.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"series":"s1","t":1037,"y":86.0,"u":[0.3]}`, `{"y":1e999}`, `{"y":"NaN","u":[0]}`,
		`{"t":"2026-11-21T10:00:00Z","y":1,"u":[1]}`, `[`, `{"y":1,"u":[0,1]}`, ``,
		` { "\u0079" : 2 , "y":[{"]":"}"}], "u" : [ 1e2 ] , "series":"\u00e9\"x" } `, `{"y":1,"y":2,"u":[3],"u":null}`,
		"{\"series\":\"a\xffb\",\"y\":1,\"u\":[0]}", `{"t":" 5","y":1,"u":[0]}`, `null`} {
		f.Add([]byte("k"), []byte(s))
	}
	known := map[Reason]bool{}
	for _, r := range Reasons {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		for _, d := range []*Decoder{decoder(), {Fields: DefaultFields, MaxBytes: 256, Inputs: -1}} {
			got, err := d.Decode(key, value, ts)
			want, wantErr := referenceDecode(d, key, value, ts)
			var re, wantRe *RejectError
			errors.As(err, &re)
			errors.As(wantErr, &wantRe)
			switch {
			case (err == nil) != (wantErr == nil):
				t.Fatalf("inputs %d: Decode %+v, %v; reference %+v, %v", d.Inputs, got, err, want, wantErr)
			case err != nil && (re == nil || wantRe == nil || re.Reason != wantRe.Reason):
				t.Fatalf("inputs %d: Decode rejects with %v, reference with %v", d.Inputs, err, wantErr)
			case err == nil && !sameRecord(got, want):
				t.Fatalf("inputs %d: Decode %+v, reference %+v", d.Inputs, got, want)
			}
		}
		rec, err := decoder().Decode(key, value, ts)
		if err != nil {
			var re *RejectError
			if !errors.As(err, &re) || !known[re.Reason] {
				t.Fatalf("error %v is not a known rejection", err)
			}
			return
		}
		if rec.Series == "" || math.IsNaN(rec.Y) || math.IsInf(rec.Y, 0) || len(rec.U) != 1 {
			t.Fatalf("invalid record accepted: %+v", rec)
		}
		for _, u := range rec.U {
			if math.IsNaN(u) || math.IsInf(u, 0) {
				t.Fatalf("non-finite input accepted: %+v", rec)
			}
		}
	})
}

func sameRecord(a, b Record) bool {
	if a.Series != b.Series || a.T != b.T || math.Float64bits(a.Y) != math.Float64bits(b.Y) || len(a.U) != len(b.U) {
		return false
	}
	for i := range a.U {
		if math.Float64bits(a.U[i]) != math.Float64bits(b.U[i]) {
			return false
		}
	}
	return true
}

// BenchmarkDecode: the daemon's record of BenchmarkLatency (key names the
// series), and one with every field, against the map-based reference.
func BenchmarkDecode(b *testing.B) {
	d := &Decoder{Fields: DefaultFields, MaxBytes: 4096, Inputs: -1}
	for _, c := range []struct{ name, key, value string }{
		{"key", "s17", `{"t":512,"y":0.7308914525051367}`},
		{"fields", "", `{"series":"plant-7","t":"2026-11-21T10:00:00.5Z","y":-1.25e-3,"u":[0.3,1,-2.5]}`},
	} {
		for _, impl := range []struct {
			name   string
			decode func(*Decoder, []byte, []byte, time.Time) (Record, error)
		}{{"scan", (*Decoder).Decode}, {"reference", referenceDecode}} {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				key, value := []byte(c.key), []byte(c.value)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := impl.decode(d, key, value, ts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
