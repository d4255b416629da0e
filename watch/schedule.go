package watch

import "time"

// The default schedule (docs/assumptions.md A-watch-schedule). An FPX B2C
// payment's outcome is known within the buyer's online-banking session,
// minutes, and the gateway retries its callback about every 30 s, so the
// first lookups come minutes apart: a callback that is merely slow is
// usually handled before the first. A B2B payment waits for the company's
// approver, and FPX allows up to seven days for that authorisation, so
// the later lookups back off to one a day and the order is given up a day
// after those seven.
const (
	// DefaultMaxAge is how long an order is awaited before it is given up.
	DefaultMaxAge = 8 * 24 * time.Hour
	// DefaultLease is how long a replica's hold on the order it checks
	// lasts unrenewed (renewed every third of it while the lookup runs):
	// a dead replica's order is checked again about 20 s later.
	DefaultLease = 20 * time.Second
	// DefaultPoll is Run's pause between two passes.
	DefaultPoll = time.Second
	// DefaultPerSecond and DefaultBurst are the fleet's default request
	// budget, retries counted: five a second, at most ten at once; gentle
	// on the gateway's reports host, and far above what a shop's missed
	// callbacks need.
	DefaultPerSecond = 5
	DefaultBurst     = 10
)

// defaultSchedule is the wait before each lookup: the first counted from
// the order's creation, each next one from the lookup before; the last
// wait repeats.
var defaultSchedule = []time.Duration{
	5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 16 * time.Hour, 24 * time.Hour,
}

// wait is the pause before lookup number checks+1 of schedule (or the
// default one when it is empty).
func wait(schedule []time.Duration, checks int) time.Duration {
	if len(schedule) == 0 {
		schedule = defaultSchedule
	}
	return schedule[min(checks, len(schedule)-1)]
}
