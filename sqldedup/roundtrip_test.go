package sqldedup

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// countingProxy forwards PostgreSQL connections and counts the round trips
// clients start: each Sync (extended protocol) or Query (simple protocol)
// message asks the server for an answer the client then waits for.
type countingProxy struct {
	ln     net.Listener
	target string
	trips  atomic.Int64
	wg     sync.WaitGroup
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
		go func() { defer p.wg.Done(); _, _ = io.Copy(c, s); c.Close() }()
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
