package observe

import "time"

// WatchCheck is one lookup of an awaited order by the pending watch
// (package watch): how old the order was, how many lookups it has had, and
// what came of it.
type WatchCheck struct {
	// Outcome is paygate.Outcome's text for the lookup ("fulfilled",
	// "pending", "not_found", ...).
	Outcome string
	// Age is the time since the order was awaited.
	Age time.Duration
	// Checks counts its lookups, this one included.
	Checks int
	// Settled is set when the order leaves the watch with its outcome
	// known; GivenUp when it leaves at its maximum age without one.
	Settled, GivenUp bool
}
