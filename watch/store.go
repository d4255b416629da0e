package watch

import (
	"context"
	"time"
)

// Order is one awaited order.
type Order struct {
	// RefNo is the reference the order was created with (refNo~extraData
	// for an order with extra data): the one the gateway's lookups take.
	RefNo string
	// Created is when the order was first awaited.
	Created time.Time
	// Next is when the order is due for its next lookup. While a replica
	// checks it, Next is the end of that replica's lease.
	Next time.Time
	// Checks counts the lookups done so far.
	Checks int
	// Token identifies the replica's hold on an order Take returned; it is
	// "" in List.
	Token string
}

// Budget is the fleet's lookup rate: at most Burst lookups at once and
// PerSecond on average, across every replica sharing a Store.
type Budget struct {
	// PerSecond is the average rate, above 0.
	PerSecond float64
	// Burst is the most lookups at once, at least 1.
	Burst int
}

// Store keeps the awaited orders and the lookup budget of a fleet. Every
// method is safe for concurrent use by every replica; times are the
// caller's clock (Watch.Now), so the replicas' clocks must agree within
// a small fraction of the lease.
type Store interface {
	// Add awaits o (RefNo, Created, Next; Checks 0). Adding a RefNo
	// already awaited changes nothing.
	Add(ctx context.Context, o Order) error
	// Take hands the caller up to n orders whose Next is at or before
	// now, earliest first, each with a new Token and its Next moved to
	// now+lease: no other caller gets it until then, so every due order
	// goes to exactly one replica at a time, and to another one if that
	// replica dies holding it.
	Take(ctx context.Context, now time.Time, n int, lease time.Duration) ([]Order, error)
	// Hold extends the caller's hold on o to until (o's Next) if o.Token
	// still holds it; otherwise it changes nothing and returns ErrLost. A
	// replica renews its hold so while its lookup runs, so that a short
	// lease (Watch.Lease) frees a dead replica's order soon.
	Hold(ctx context.Context, o Order, until time.Time) error
	// Reschedule sets o's Next and Checks if o.Token still holds it;
	// otherwise (its lease passed and another replica took it, or it was
	// removed) it changes nothing and returns ErrLost.
	Reschedule(ctx context.Context, o Order) error
	// Finish stops awaiting o if o.Token still holds it (its outcome is
	// known, or it was given up); otherwise it changes nothing and returns
	// ErrLost.
	Finish(ctx context.Context, o Order) error
	// Remove stops awaiting refNo whoever holds it (Watch.Forget); removing
	// one not awaited is no error.
	Remove(ctx context.Context, refNo string) error
	// List returns the awaited orders, earliest Next first, at most limit.
	List(ctx context.Context, limit int) ([]Order, error)
	// Find returns the awaited orders whose reference as created is base,
	// or base followed by "~" and extra data, in the order of RefNo.
	Find(ctx context.Context, base string) ([]Order, error)
	// Spend takes up to n lookups from the fleet's budget b at now and
	// returns how many it granted: the bucket holds at most b.Burst and
	// fills at b.PerSecond from the latest spend's time to now (nothing when
	// now is earlier: spends arriving out of order fill no span twice), so
	// over any span T the fleet's lookups stay within b.Burst +
	// b.PerSecond*T while the replicas' clocks agree. A spend more than a
	// minute before the latest is a clock reset: the bucket restarts from
	// it, so a clock that was far ahead stops the budget for a minute at
	// most.
	Spend(ctx context.Context, now time.Time, b Budget, n int) (int, error)
}
