package paygate

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a clock a test moves on; safe for the handler's renewals.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) myt(ago time.Duration) string {
	return c.now().Add(-ago).In(MalaysiaTime()).Format(time.DateTime)
}

// replayShop is a merchant whose Fulfil appends a ledger row per call (no
// idempotency of its own), behind a handler on a MemoryDeduper, both on one
// fake clock.
type replayShop struct {
	clock  *fakeClock
	h      *CallbackHandler
	key    Key
	mu     sync.Mutex
	ledger []string
	held   []error
}

func newReplayShop(t *testing.T) *replayShop {
	key, err := ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	s := &replayShop{clock: newFakeClock(time.Date(2026, 11, 22, 2, 30, 15, 0, time.UTC)), key: key}
	s.h = &CallbackHandler{
		Keys: []Key{key}, Logger: slog.New(slog.DiscardHandler), Now: s.clock.now,
		Deduper: &MemoryDeduper{Now: s.clock.now},
		Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.ledger = append(s.ledger, cb.RefNo)
			return nil
		}),
		OnHeldBack: func(_ context.Context, cb *Callback, err error) error {
			require.True(t, cb.Verified)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.held = append(s.held, err)
			return nil
		},
	}
	return s
}

// deliver posts a signed success of ref, with txnTime unless "", and
// returns the status.
func (s *replayShop) deliver(t *testing.T, ref, txnTime string) int {
	t.Helper()
	f := callbackFields(ref, "GW-"+ref, StatusSuccess, "00")
	f.Del("fpxTxnTime")
	if txnTime != "" {
		f.Set("fpxTxnTime", txnTime)
	}
	r, err := newCallbackRequest(s.key, "/return", f)
	require.NoError(t, err)
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w.Code
}

// counts is how many ledger rows and held-back successes there are.
func (s *replayShop) counts() (ledger, held int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ledger), len(s.held)
}

// A fulfilled callback replayed after the ordinary 30 days, and after the
// completed record itself is forgotten, is answered 200 and never
// fulfilled again: by its record while it is kept, by its age (held back)
// when it carries a fpxTxnTime. Without one, the record alone answers.
func TestCallbackReplayNeverFulfilsTwice(t *testing.T) {
	for _, tc := range []struct {
		name string
		txn  bool
		// later are the replays' delays, each after the one before.
		later    []time.Duration
		wantHeld int
	}{
		{name: "with fpxTxnTime", txn: true, later: []time.Duration{31 * 24 * time.Hour, 30 * 24 * time.Hour, DefaultRetention}, wantHeld: 3},
		{name: "without fpxTxnTime", later: []time.Duration{31 * 24 * time.Hour, 30 * 24 * time.Hour, 300 * 24 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newReplayShop(t)
			txn := ""
			if tc.txn {
				txn = s.clock.myt(time.Minute)
			}
			require.Equal(t, http.StatusOK, s.deliver(t, "INV-1", txn))
			for _, d := range tc.later {
				s.clock.add(d)
				require.Equal(t, http.StatusOK, s.deliver(t, "INV-1", txn), "replay %v later", d)
			}
			ledger, held := s.counts()
			require.Equal(t, 1, ledger, "ledger rows")
			require.Equal(t, tc.wantHeld, held, "held back")
		})
	}
}

// A verified success outside the replay bound is held back on its first
// delivery too: 200, OnHeldBack told with ErrHeldBack, never fulfilled.
// One within it, or whose fpxTxnTime the SDK cannot read, is fulfilled.
func TestCallbackTxnAge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		txn     func(c *fakeClock) string
		maxAge  time.Duration
		fulfils bool
	}{
		{name: "55 days old", txn: func(c *fakeClock) string { return c.myt(55 * 24 * time.Hour) }},
		{name: "31 days old, FPX layout", txn: func(c *fakeClock) string {
			return c.now().Add(-31 * 24 * time.Hour).In(MalaysiaTime()).Format("20060102150405")
		}},
		{name: "two days ahead", txn: func(c *fakeClock) string { return c.myt(-48 * time.Hour) }},
		{name: "29 days old", txn: func(c *fakeClock) string { return c.myt(29 * 24 * time.Hour) }, fulfils: true},
		{name: "an hour ahead", txn: func(c *fakeClock) string { return c.myt(-time.Hour) }, fulfils: true},
		{name: "unreadable", txn: func(*fakeClock) string { return "22/11/2026 10:30" }, fulfils: true},
		{name: "55 days old, no bound", txn: func(c *fakeClock) string { return c.myt(55 * 24 * time.Hour) }, maxAge: -1, fulfils: true},
		{name: "2 days old, bound of a day", txn: func(c *fakeClock) string { return c.myt(48 * time.Hour) }, maxAge: 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newReplayShop(t)
			s.h.MaxTxnAge = tc.maxAge
			require.Equal(t, http.StatusOK, s.deliver(t, "INV-1", tc.txn(s.clock)))
			ledger, held := s.counts()
			if tc.fulfils {
				require.Equal(t, [2]int{1, 0}, [2]int{ledger, held})
				return
			}
			require.Equal(t, [2]int{0, 1}, [2]int{ledger, held})
			require.ErrorIs(t, s.held[0], ErrHeldBack)
		})
	}
}

// An OnHeldBack that fails answers 500, so that the gateway tells it
// again; nothing is fulfilled either way.
func TestCallbackHeldBackHookFails(t *testing.T) {
	s := newReplayShop(t)
	calls := 0
	s.h.OnHeldBack = func(context.Context, *Callback, error) error {
		if calls++; calls == 1 {
			return ErrHeldBack
		}
		panic("merchant bug")
	}
	old := s.clock.myt(40 * 24 * time.Hour)
	require.Equal(t, http.StatusInternalServerError, s.deliver(t, "INV-1", old))
	require.Equal(t, http.StatusInternalServerError, s.deliver(t, "INV-1", old))
	ledger, _ := s.counts()
	require.Zero(t, ledger)
}
