// Package reject owns why a record or an observation is refused: the closed
// set of reasons, fit for a metric label and a dead letter's header, and the
// error that carries one. The decoder (internal/source) refuses what is
// malformed on the wire, the learner (internal/online) what its state
// cannot take; both speak these reasons.
package reject

import (
	"errors"
	"fmt"
)

// Reason is why a record was refused. The set is closed, so it can label a
// metric without unbounded cardinality.
type Reason string

// The reasons. The decoder checks a record in this order, the first
// failure naming it; the learner checks NonFiniteY, BadInputs,
// NonFiniteInput, BadFuture and NonFiniteFuture again on its own API and
// adds OutOfRange, BadTime for a t beyond ±2^53 and TNotIncreasing; the
// daemon gives BadTime to a t of another kind than its series' earlier
// ones.
const (
	Oversize        Reason = "oversize"            // value larger than the configured limit
	InvalidJSON     Reason = "invalid_json"        // not a JSON object
	MissingSeries   Reason = "missing_series"      // no series field and no key
	SeriesKey       Reason = "series_key_mismatch" // a series field that differs from the record's key
	BadSeries       Reason = "bad_series"          // a series id too long, not UTF-8, or with control characters
	MissingY        Reason = "missing_y"           // no y field
	BadY            Reason = "bad_y"               // y not a number: null, true, an array, a string such as "1.5"
	NonFiniteY      Reason = "non_finite_y"        // y a number that is not finite (overflow, or the strings "NaN", "Infinity")
	BadInputs       Reason = "bad_inputs"          // u not an array of numbers, or the wrong length
	NonFiniteInput  Reason = "non_finite_input"    // an input not finite
	BadFuture       Reason = "bad_future"          // future not a list of rows of the planned inputs' number, or too many rows
	NonFiniteFuture Reason = "non_finite_future"   // a planned input in future not finite
	BadTime         Reason = "bad_time"            // t not an integer, an RFC 3339 time, a date or a month (or seconds overflowing ms), or of another kind than the series' earlier t
	TNotIncreasing  Reason = "t_not_increasing"    // t not after the series' last t
	OutOfRange      Reason = "out_of_range"        // y, an input or a planned input beyond ±1e150, whose square would overflow
)

// Reasons lists every Reason, for pre-creating metric series.
var Reasons = []Reason{Oversize, InvalidJSON, MissingSeries, SeriesKey, BadSeries, MissingY, BadY, NonFiniteY,
	BadInputs, NonFiniteInput, BadFuture, NonFiniteFuture, BadTime, TNotIncreasing, OutOfRange}

// ErrRejected is wrapped by every *Error.
var ErrRejected = errors.New("rejected")

// Error says why a record or an observation was refused.
type Error struct {
	Reason Reason
	Detail string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Reason, e.Detail) }

// Unwrap makes errors.Is(err, ErrRejected) true.
func (e *Error) Unwrap() error { return ErrRejected }

// Errorf returns an *Error for r with the formatted detail.
func Errorf(r Reason, format string, args ...any) error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...)}
}
