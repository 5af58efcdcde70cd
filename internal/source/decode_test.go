package source

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/reject"
)

var ts = time.UnixMilli(1_700_000_000_000)

func decoder() *Decoder {
	return &Decoder{Fields: DefaultFields, MaxBytes: 256, MaxSeriesBytes: 32, Inputs: 1, Planned: 2}
}

func TestDecodeAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             Record
	}{
		{"full", "", `{"series":"s1","t":1037,"y":86.0,"u":[0.3]}`, Record{Series: "s1", T: 1037, Y: 86, U: []float64{0.3}}},
		{"key names the series", "s2", `{"t":5,"y":-1e-3,"u":[1]}`, Record{Series: "s2", T: 5, Y: -0.001, U: []float64{1}}},
		{"field equal to the key", "s3", `{"series":"s3","t":1,"y":1,"u":[2]}`, Record{Series: "s3", T: 1, Y: 1, U: []float64{2}}},
		{"field without a key", "", `{"series":"s3","t":1,"y":1,"u":[2]}`, Record{Series: "s3", T: 1, Y: 1, U: []float64{2}}},
		{"id of MaxSeriesBytes, unicode", "", `{"series":"` + strings.Repeat("é", 16) + `","t":1,"y":1,"u":[2]}`,
			Record{Series: strings.Repeat("é", 16), T: 1, Y: 1, U: []float64{2}}},
		{"rfc3339 time", "s", `{"t":"2026-11-21T10:00:00.5Z","y":2,"u":[0]}`, Record{Series: "s", T: time.Date(2026, 11, 21, 10, 0, 0, 5e8, time.UTC).UnixMilli(), IsTime: true, Y: 2, U: []float64{0}}},
		{"date", "s", `{"t":"2026-11-21","y":2,"u":[0]}`, Record{Series: "s", T: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC).UnixMilli(), IsTime: true, Y: 2, U: []float64{0}}},
		{"time without zone is UTC", "s", `{"t":"2026-11-21 10:00:00","y":2,"u":[0]}`, Record{Series: "s", T: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).UnixMilli(), IsTime: true, Y: 2, U: []float64{0}}},
		{"no t: record timestamp", "s", `{"y":3,"u":[0]}`, Record{Series: "s", T: ts.UnixMilli(), IsTime: true, Y: 3, U: []float64{0}}},
		{"unknown fields ignored", "s", `{"y":3,"u":[0],"t":1,"note":"x"}`, Record{Series: "s", T: 1, Y: 3, U: []float64{0}}},
		{"null series and t are absent", "k", `{"series":null,"t":null,"y":3,"u":[0]}`, Record{Series: "k", T: ts.UnixMilli(), IsTime: true, Y: 3, U: []float64{0}}},
		{"future rows", "s", `{"t":7,"y":1,"u":[0],"future":[[1,20.5],[0,-3e2]]}`,
			Record{Series: "s", T: 7, Y: 1, U: []float64{0}, Future: [][]float64{{1, 20.5}, {0, -300}}}},
		{"empty or null future is none", "s", `{"t":7,"y":1,"u":[0],"future":[]}`, Record{Series: "s", T: 7, Y: 1, U: []float64{0}}},
		{"null future", "s", `{"t":7,"y":1,"u":[0],"future":null}`, Record{Series: "s", T: 7, Y: 1, U: []float64{0}}},
	} {
		got, err := decoder().Decode([]byte(tc.key), []byte(tc.value), ts)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !sameRecord(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// An integer t is read in the decoder's unit; a timestamp string is a time
// whatever the unit. UnixInteger marks the integers read as Unix times.
func TestDecodeTimeUnit(t *testing.T) {
	xmas := time.Date(2024, 12, 25, 0, 0, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		unit            calendar.Unit
		value           string
		t               int64
		isTime, integer bool
	}{
		{calendar.Sequence, `{"t":1735084800,"y":1}`, 1735084800, false, false},
		{calendar.Millis, `{"t":1735084800000,"y":1}`, xmas, true, true},
		{calendar.Seconds, `{"t":1735084800,"y":1}`, xmas, true, true},
		{calendar.Sequence, `{"t":"2024-12-25","y":1}`, xmas, true, false},
		{calendar.Seconds, `{"t":"2024-12-25T00:00:00Z","y":1}`, xmas, true, false},
		{calendar.Millis, `{"y":1}`, ts.UnixMilli(), true, false}, // the record's time
	} {
		d := &Decoder{Fields: DefaultFields, Unit: tc.unit}
		got, err := d.Decode([]byte("s"), []byte(tc.value), ts)
		if err != nil || got.T != tc.t || got.IsTime != tc.isTime || got.UnixInteger != tc.integer {
			t.Errorf("%v %s: T %d IsTime %v UnixInteger %v err %v, want %d %v %v", tc.unit, tc.value, got.T, got.IsTime, got.UnixInteger, err, tc.t, tc.isTime, tc.integer)
		}
	}
	d := &Decoder{Fields: DefaultFields, Unit: calendar.Seconds}
	_, err := d.Decode([]byte("s"), []byte(`{"t":9223372036854776,"y":1}`), ts)
	if re := (*reject.Error)(nil); !errors.As(err, &re) || re.Reason != reject.BadTime || !strings.Contains(re.Detail, "overflow") {
		t.Errorf("seconds overflowing ms: %v, want bad_time", err)
	}
}

// With Planned < 0 the rows may have any width, the same in each; with
// Fields.Future "" the field is not read at all.
func TestDecodeFutureAnyWidth(t *testing.T) {
	d := &Decoder{Fields: DefaultFields, Inputs: -1, Planned: -1}
	got, err := d.Decode([]byte("s"), []byte(`{"y":1,"future":[[1,2,3],[4,5,6]]}`), ts)
	if err != nil || len(got.Future) != 2 || !slices.Equal(got.Future[1], []float64{4, 5, 6}) {
		t.Errorf("any width: %+v, %v", got, err)
	}
	if _, err := d.Decode([]byte("s"), []byte(`{"y":1,"future":[[1,2,3],[4,5]]}`), ts); err == nil ||
		!strings.Contains(err.Error(), "future[1] has 2 values, future[0] has 3") {
		t.Errorf("ragged rows: %v", err)
	}
	off := &Decoder{Fields: DefaultFields, Planned: 2}
	off.Fields.Future = ""
	if got, err := off.Decode([]byte("s"), []byte(`{"y":1,"":"not rows","future":7}`), ts); err != nil || got.Future != nil {
		t.Errorf("future field off: %+v, %v", got, err)
	}
	// A row appended to by its user does not overwrite the next row.
	got, err = decoder().Decode([]byte("s"), []byte(`{"y":1,"u":[0],"future":[[1,2],[3,4]]}`), ts)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(got.Future[0], 99)
	if got.Future[1][0] != 3 {
		t.Errorf("rows share capacity: row 1 is %v", got.Future[1])
	}
}

// The bad-input table of issue 5: each is rejected with its reason.
func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		reason           reject.Reason
	}{
		{"invalid json", "s", `{"y":1,`, reject.InvalidJSON},
		{"not an object", "s", `[1,2]`, reject.InvalidJSON},
		{"trailing data", "s", `{"y":1,"u":[0]} {}`, reject.InvalidJSON},
		{"trailing bracket", "s", `{"y":1,"u":[0]}]`, reject.InvalidJSON},
		{"missing y", "s", `{"t":1,"u":[0]}`, reject.MissingY},
		{"y NaN string", "s", `{"y":"NaN","u":[0]}`, reject.NonFiniteY},
		{"y overflows to Inf", "s", `{"y":1e999,"u":[0]}`, reject.NonFiniteY},
		{"y null", "s", `{"y":null,"u":[0]}`, reject.BadY},
		{"y a numeric string", "s", `{"y":"1.5","u":[0]}`, reject.BadY},
		{"y true", "s", `{"y":true,"u":[0]}`, reject.BadY},
		{"y an array", "s", `{"y":[1],"u":[0]}`, reject.BadY},
		{"y Infinity string", "s", `{"y":"-Infinity","u":[0]}`, reject.NonFiniteY},
		{"series under another key", "k", `{"series":"x","y":1,"u":[0]}`, reject.SeriesKey},
		{"series id too long", "", `{"series":"` + strings.Repeat("x", 33) + `","y":1,"u":[0]}`, reject.BadSeries},
		{"key too long", strings.Repeat("k", 33), `{"y":1,"u":[0]}`, reject.BadSeries},
		{"series with NUL", "", `{"series":"a\u0000b","y":1,"u":[0]}`, reject.BadSeries},
		{"series with a newline", "", `{"series":"a\nb","y":1,"u":[0]}`, reject.BadSeries},
		{"series with an ANSI escape", "", `{"series":"\u001b[31mred","y":1,"u":[0]}`, reject.BadSeries},
		{"key not UTF-8", "a\xffb", `{"y":1,"u":[0]}`, reject.BadSeries},
		{"wrong u length", "s", `{"y":1,"u":[0,1]}`, reject.BadInputs},
		{"u missing", "s", `{"y":1}`, reject.BadInputs},
		{"u not an array", "s", `{"y":1,"u":3}`, reject.BadInputs},
		{"u overflows", "s", `{"y":1,"u":[-1e400]}`, reject.NonFiniteInput},
		{"bad t", "s", `{"y":1,"u":[0],"t":"yesterday"}`, reject.BadTime},
		{"fractional t", "s", `{"y":1,"u":[0],"t":1.5}`, reject.BadTime},
		{"no key and no series", "", `{"y":1,"u":[0]}`, reject.MissingSeries},
		{"series not a string", "s", `{"series":7,"y":1,"u":[0]}`, reject.MissingSeries},
		{"series empty under a key", "s", `{"series":"","y":1,"u":[0]}`, reject.MissingSeries},
		{"oversize", "s", `{"y":1,"u":[0],"pad":"` + strings.Repeat("x", 300) + `"}`, reject.Oversize},
		{"future not an array", "s", `{"y":1,"u":[0],"future":{"h":1}}`, reject.BadFuture},
		{"future a flat list", "s", `{"y":1,"u":[0],"future":[1,2]}`, reject.BadFuture},
		{"future row null", "s", `{"y":1,"u":[0],"future":[[1,2],null]}`, reject.BadFuture},
		{"future row too short", "s", `{"y":1,"u":[0],"future":[[1,2],[3]]}`, reject.BadFuture},
		{"future shape before values", "s", `{"y":1,"u":[0],"future":[[1,"x"],[3]]}`, reject.BadFuture},
		{"future value a string", "s", `{"y":1,"u":[0],"future":[[1,2],[3,"4"]]}`, reject.NonFiniteFuture},
		{"future value overflows", "s", `{"y":1,"u":[0],"future":[[1,1e400]]}`, reject.NonFiniteFuture},
		{"future checked before t", "s", `{"y":1,"u":[0],"future":[[1]],"t":"soon"}`, reject.BadFuture},
		{"t a quoted integer", "s", `{"y":1,"u":[0],"t":"1037"}`, reject.BadTime},
		{"t true", "s", `{"y":1,"u":[0],"t":true}`, reject.BadTime},
	} {
		_, err := decoder().Decode([]byte(tc.key), []byte(tc.value), ts)
		var re *reject.Error
		if !errors.As(err, &re) || !errors.Is(err, reject.ErrRejected) {
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
		"{\"series\":\"a\xffb\",\"y\":1,\"u\":[0]}", `{"t":" 5","y":1,"u":[0]}`, `null`,
		`{"t":"2024-12-25","y":1,"u":[0],"future":[[1,2],[3,4]]}`, `{"y":1,"u":[0],"future":[[1],[2,3]]}`,
		`{"y":1,"u":[0],"future":[ [ 1 , 2 ] , null ]}`, `{"y":1,"u":[0],"future":[[1,"x"]],"t":9223372036854775807}`,
		`{"y":1,"u":[0],"future":[],"t":"2024-12-25 10:00:00.5"}`} {
		f.Add([]byte("k"), []byte(s))
		f.Add([]byte(nil), []byte(s))
	}
	known := map[reject.Reason]bool{}
	for _, r := range reject.Reasons {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		for _, d := range []*Decoder{decoder(), {Fields: DefaultFields, MaxBytes: 256, Inputs: -1, Planned: -1, Unit: calendar.Seconds},
			{Fields: DefaultFields, MaxBytes: 256, Inputs: -1, Unit: calendar.Millis}} {
			got, err := d.Decode(key, value, ts)
			want, wantErr := referenceDecode(d, key, value, ts)
			var re, wantRe *reject.Error
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
			var re *reject.Error
			if !errors.As(err, &re) || !known[re.Reason] {
				t.Fatalf("error %v is not a known rejection", err)
			}
			return
		}
		if rec.Series == "" || math.IsNaN(rec.Y) || math.IsInf(rec.Y, 0) || len(rec.U) != 1 || len(rec.Future) > MaxFutureRows {
			t.Fatalf("invalid record accepted: %+v", rec)
		}
		for _, u := range slices.Concat(append(rec.Future, rec.U)...) {
			if math.IsNaN(u) || math.IsInf(u, 0) {
				t.Fatalf("non-finite input accepted: %+v", rec)
			}
		}
		for h, row := range rec.Future {
			if len(row) != 2 {
				t.Fatalf("future[%d] has %d values, want 2: %+v", h, len(row), rec)
			}
		}
	})
}

// sameRecord compares bit for bit; nil and empty slices differ, since a
// record's Future is documented nil when it has none.
func sameRecord(a, b Record) bool {
	same := func(x, y []float64) bool {
		return (x == nil) == (y == nil) && slices.EqualFunc(x, y, func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) })
	}
	if a.Series != b.Series || a.T != b.T || a.IsTime != b.IsTime || math.Float64bits(a.Y) != math.Float64bits(b.Y) ||
		!same(a.U, b.U) || (a.Future == nil) != (b.Future == nil) || len(a.Future) != len(b.Future) {
		return false
	}
	for h := range a.Future {
		if !same(a.Future[h], b.Future[h]) {
			return false
		}
	}
	return true
}

// The row bound: MaxFutureRows rows pass, one more is refused before any
// row is decoded.
func TestDecodeFutureRowBound(t *testing.T) {
	d := &Decoder{Fields: DefaultFields, MaxBytes: 1 << 20, Planned: 1}
	rows := func(n int) []byte {
		return []byte(`{"y":1,"future":[` + strings.TrimSuffix(strings.Repeat("[0.5],", n), ",") + `]}`)
	}
	got, err := d.Decode([]byte("s"), rows(MaxFutureRows), ts)
	if err != nil || len(got.Future) != MaxFutureRows || got.Future[MaxFutureRows-1][0] != 0.5 {
		t.Errorf("%d rows: %d decoded, %v", MaxFutureRows, len(got.Future), err)
	}
	_, err = d.Decode([]byte("s"), rows(MaxFutureRows+1), ts)
	if re := (*reject.Error)(nil); !errors.As(err, &re) || re.Reason != reject.BadFuture || !strings.Contains(re.Detail, "10001 rows, at most 10000") {
		t.Errorf("%d rows: %v, want bad_future", MaxFutureRows+1, err)
	}
}

// BenchmarkDecode: the daemon's record of BenchmarkLatency (key names the
// series), one with every field but future, and one with three future rows
// (4 allocations: the series, the inputs, the rows and their values), against
// the map-based reference.
func BenchmarkDecode(b *testing.B) {
	d := &Decoder{Fields: DefaultFields, MaxBytes: 4096, Inputs: -1, Planned: -1}
	for _, c := range []struct{ name, key, value string }{
		{"key", "s17", `{"t":512,"y":0.7308914525051367}`},
		{"fields", "", `{"series":"plant-7","t":"2026-11-21T10:00:00.5Z","y":-1.25e-3,"u":[0.3,1,-2.5]}`},
		{"future", "", `{"series":"plant-7","t":1037,"y":-1.25e-3,"u":[0.3,1],"future":[[0.3,1],[0.4,1],[0.5,0]]}`},
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
