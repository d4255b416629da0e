package pgstore

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// countingProxy forwards PostgreSQL connections (sslmode=disable) and
// counts the round trips clients start: each Sync (extended protocol) or
// Query (simple protocol) message asks the server for an answer the client
// then waits for. Armed with dropCommit, it cuts the next connection whose
// server confirms a COMMIT, before the client reads the confirmation: a
// COMMIT whose outcome the client cannot know.
type countingProxy struct {
	ln         net.Listener
	target     string
	trips      atomic.Int64
	dropCommit atomic.Bool
	wg         sync.WaitGroup
}

// newCountingProxy listens on loopback in front of the test server and
// returns it with a DSN that goes through it.
func newCountingProxy(t testing.TB, dsn string) (*countingProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &countingProxy{ln: ln, target: u.Host}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *countingProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); p.backend(s, c); c.Close(); s.Close() }()
		go func() { defer p.wg.Done(); p.frontend(c, s); s.Close() }()
	}
}

// frontend copies client messages to the server, counting Sync and Query.
func (p *countingProxy) frontend(c io.Reader, s io.Writer) {
	var head [5]byte
	// Start-up: length-prefixed packets without a type byte, until the
	// StartupMessage itself (not an SSL or GSS encryption request).
	for {
		if _, err := io.ReadFull(c, head[:4]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(head[:4])
		body := make([]byte, n-4)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if _, err := s.Write(append(head[:4:4], body...)); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(body[:4]); code != 80877103 && code != 80877104 {
			break
		}
	}
	for {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		if head[0] == 'S' || head[0] == 'Q' {
			p.trips.Add(1)
		}
		n := binary.BigEndian.Uint32(head[1:])
		if _, err := s.Write(head[:]); err != nil {
			return
		}
		if _, err := io.CopyN(s, c, int64(n-4)); err != nil {
			return
		}
	}
}

// backend copies server messages to the client, message by message, and
// cuts both connections instead of passing on a COMMIT's CommandComplete
// when dropCommit is armed.
func (p *countingProxy) backend(s io.Reader, c io.Writer) {
	r := bufio.NewReader(s)
	var head [5]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if head[0] == 'C' && string(body) == "COMMIT\x00" && p.dropCommit.CompareAndSwap(true, false) {
			return
		}
		if _, err := c.Write(append(head[:], body...)); err != nil {
			return
		}
	}
}

// roundTrips counts the round trips fn makes.
func (p *countingProxy) roundTrips(fn func()) int64 {
	before := p.trips.Load()
	fn()
	return p.trips.Load() - before
}

// A duplicate callback costs the deduper one round trip; a new event two
// (claim, complete); a renewal one.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	proxy, dsn := newCountingProxy(t, testDSN(t))
	d, _ := testDeduperOn(t, openDB(t, dsn))
	// Warm the connection and pgx's statement cache.
	warm, err := d.Claim(ctx, "warm", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Renew(ctx, "warm", warm.Token, time.Minute))
	require.NoError(t, d.Complete(ctx, "warm", warm.Token, "x"))

	var c paygate.ClaimResult
	require.EqualValues(t, 1, proxy.roundTrips(func() { c, err = d.Claim(ctx, "fresh", time.Minute) }))
	require.NoError(t, err)
	require.EqualValues(t, 1, proxy.roundTrips(func() { err = d.Renew(ctx, "fresh", c.Token, time.Minute) }))
	require.NoError(t, err)
	require.EqualValues(t, 1, proxy.roundTrips(func() { err = d.Complete(ctx, "fresh", c.Token, "GW1") }))
	require.NoError(t, err)
	require.EqualValues(t, 1, proxy.roundTrips(func() { c, err = d.Claim(ctx, "fresh", time.Minute) }), "a duplicate is one statement")
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, c)
	require.EqualValues(t, 1, proxy.roundTrips(func() { c, err = d.Claim(ctx, "busy-"+c.Result, time.Minute) }))
	require.EqualValues(t, 1, proxy.roundTrips(func() { c, err = d.Claim(ctx, "busy-GW1", time.Minute) }), "busy is one statement")
	require.Equal(t, paygate.ClaimBusy, c.State)
	require.False(t, errors.Is(err, paygate.ErrClaimLost))
}

// FulfilTx costs one round trip beyond the merchant's own BEGIN,
// statement and COMMIT for a new event (its claim); FulfilPgx none (its
// claim goes with BEGIN); HookTx two (the claim before, the fenced
// completion), and a commit more. A duplicate costs FulfilTx four, none
// of which commits, FulfilPgx two, and HookTx one.
func TestFulfilTxRoundTrips(t *testing.T) {
	proxy, dsn := newCountingProxy(t, testDSN(t))
	s := newTxShop(t, openDB(t, dsn))
	var hold atomic.Pointer[chan struct{}]
	entered := make(chan struct{}, 1)
	wait := func() {
		if proceed := hold.Load(); proceed != nil {
			entered <- struct{}{}
			<-*proceed
		}
	}
	fn := func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		err := s.insert(ctx, tx, cb, "A")
		wait()
		return err
	}
	pgxFn := func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
		err := s.pathInsert(ctx, tx, cb, "A")
		wait()
		return err
	}
	for _, tc := range []struct {
		name string
		h    *paygate.CallbackHandler
		want txTrips
	}{
		// BEGIN, the claim, the read, ROLLBACK for either duplicate.
		{name: "FulfilTx", h: s.handlerTx(s.d, fn), want: txTrips{fresh: 1, done: 4, inFlight: 4}},
		// BEGIN with the claim, then the read with ROLLBACK.
		{name: "FulfilPgx", h: s.handlerOn(fulfilPath{wire: wirePgx}, s.d, pgxFn), want: txTrips{fresh: 0, done: 2, inFlight: 2}},
		// The claim (and the fenced completion); a duplicate is the claim.
		{name: "HookTx", h: s.handler(s.d, 0, s.d.HookTx(fn)), want: txTrips{fresh: 2, done: 1, inFlight: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) { txRoundTrips(t, s, proxy, tc.h, tc.want, tc.name+"-", &hold, entered) })
	}
}

// txTrips are the round trips of a delivery: a new event's beyond the
// merchant's own BEGIN, INSERT and COMMIT; a duplicate's of a completed
// event and of one in flight.
type txTrips struct{ fresh, done, inFlight int64 }

// txRoundTrips counts the round trips of h, a handler whose fn holds while
// hold is set, telling entered.
func txRoundTrips(t *testing.T, s *txShop, proxy *countingProxy, h *paygate.CallbackHandler, want txTrips, p string, hold *atomic.Pointer[chan struct{}], entered chan struct{}) {
	// inFlight runs during while a delivery of ref is inside its hook.
	inFlight := func(ref string, during func()) {
		proceed := make(chan struct{})
		hold.Store(&proceed)
		first := make(chan int, 1)
		go func() { first <- s.deliver(t, h, ref) }()
		defer func() { hold.Store(nil); close(proceed); require.Equal(t, http.StatusOK, <-first) }()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("waited 10 s for the hook of %s to start", ref)
		}
		during()
	}
	// Warm both connections the handler uses and pgx's statement caches.
	for i := range 3 {
		require.Equal(t, http.StatusOK, s.deliver(t, h, fmt.Sprint(p, "WARM-", i)))
		require.Equal(t, http.StatusOK, s.deliver(t, h, fmt.Sprint(p, "WARM-", i)))
		inFlight(fmt.Sprint(p, "WARM-FLIGHT-", i), func() { s.deliver(t, h, fmt.Sprint(p, "WARM-FLIGHT-", i)) })
	}
	const merchant = 3 // BEGIN, INSERT, COMMIT
	var code int
	require.EqualValues(t, merchant+want.fresh, proxy.roundTrips(func() { code = s.deliver(t, h, p+"NEW") }), "a new event")
	require.Equal(t, http.StatusOK, code)
	require.EqualValues(t, want.done, proxy.roundTrips(func() { code = s.deliver(t, h, p+"NEW") }), "a duplicate of a completed event")
	require.Equal(t, http.StatusOK, code)
	inFlight(p+"FLIGHT", func() {
		require.EqualValues(t, want.inFlight, proxy.roundTrips(func() { code = s.deliver(t, h, p+"FLIGHT") }), "a duplicate in flight")
		require.Equal(t, http.StatusServiceUnavailable, code)
	})
	require.Len(t, s.rows(t, p+"FLIGHT"), 1)
}
