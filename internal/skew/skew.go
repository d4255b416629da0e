// Package skew keeps how far a service's clock is from the client's, as
// measured from the Date header of the service's answers, so that a
// signature's exp is dated on the clock that checks it
// (docs/assumptions.md A-clock-skew).
//
// The offset is trusted because of where it comes from: the client reads
// it only from answers to its own requests to the hosts it was configured
// with, which are https (the server authenticated by its certificate) or
// plain http to a loopback host. It is corrected only from Min, since a
// Date header has whole seconds and a signature lives 60 s, and only up to
// Max: a larger measurement is a broken clock somewhere, to be fixed
// rather than followed, and is not adopted (the error that explains a
// refusal names it).
package skew

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

const (
	// Min is the smallest offset corrected; under it the client signs on
	// its own clock.
	Min = 5 * time.Second
	// Max is the largest offset adopted.
	Max = time.Hour
)

// Clock is one client's view of the service's clock. The zero Clock has
// offset 0; it is safe for concurrent use.
type Clock struct {
	offset   atomic.Int64 // nanoseconds added to the local clock when signing
	measured atomic.Int64 // nanoseconds, the latest measurement
	seen     atomic.Bool  // whether an answer has carried a Date
}

// Offset is the offset the client signs with: the service's clock minus
// the local one, 0 until an answer showed at least Min.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// Measured is the latest measurement, adopted or not, and whether there
// has been one.
func (c *Clock) Measured() (time.Duration, bool) {
	return time.Duration(c.measured.Load()), c.seen.Load()
}

// Learn measures the offset from an answer's Date header read when the
// local clock said at, and adopts it: 0 under Min, the measurement up to
// Max, and the previous offset kept beyond Max. It returns the
// measurement, and false when the header is missing or not an HTTP date.
func (c *Clock) Learn(h http.Header, at time.Time) (time.Duration, bool) {
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return 0, false
	}
	m := date.Sub(at.Truncate(time.Second))
	c.measured.Store(int64(m))
	c.seen.Store(true)
	switch {
	case m.Abs() < Min:
		c.offset.Store(0)
	case m.Abs() <= Max:
		c.offset.Store(int64(m))
	}
	return m, true
}

// Explains reports whether an offset measured on an answer explains a
// refused signature: it is at least Min away from the offset the request
// was signed with.
func Explains(measured, signedWith time.Duration) bool {
	return (measured - signedWith).Abs() >= Min
}

// Explain says what a measured offset means for a refused signature, in
// words for an error message.
func Explain(measured time.Duration) string {
	side := "ahead of"
	if measured < 0 {
		side = "behind"
	}
	msg := fmt.Sprintf("the service's clock is %v %s the client's (its Date header), so the signature's exp may have been out of date on it", measured.Abs(), side)
	if measured.Abs() > Max {
		return msg + fmt.Sprintf("; that is more than the %v the client corrects for: set this machine's clock", Max)
	}
	return msg + "; later requests are signed on the service's clock: try again"
}
