package reject

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
)

// Every reason is a distinct metric label of Prometheus' form (lower case,
// underscores), and an *Error wrapped anywhere still reads as rejected with
// its reason.
func TestReasonsAndError(t *testing.T) {
	label := regexp.MustCompile(`^[a-z][a-z_]*$`)
	seen := map[Reason]bool{}
	for _, r := range Reasons {
		if seen[r] {
			t.Errorf("reason %q listed twice", r)
		}
		seen[r] = true
		if !label.MatchString(string(r)) {
			t.Errorf("reason %q is not a metric label value of the form %s", r, label)
		}
	}
	err := fmt.Errorf("partition 3: %w", Errorf(BadTime, "t %q", "yesterday"))
	var re *Error
	if !errors.Is(err, ErrRejected) || !errors.As(err, &re) || re.Reason != BadTime || re.Detail != `t "yesterday"` {
		t.Fatalf("wrapped reject: %v (as %+v)", err, re)
	}
	if got, want := re.Error(), `bad_time: t "yesterday"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
