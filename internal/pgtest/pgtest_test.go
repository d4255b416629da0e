package pgtest_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/pgtest"
)

// A server listens on its Addr once started and again once restarted, and
// no longer once stopped; stopping it again, as the test's end does, is
// no error. Needs PAYGATE_TEST_PG_BIN.
func TestServerStartRestartStop(t *testing.T) {
	s := pgtest.Start(t)
	dial := func() error {
		c, err := net.Dial("tcp", s.Addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	require.NoError(t, dial(), "started")
	s.RestartImmediate(t)
	require.NoError(t, dial(), "restarted")
	s.Stop(t)
	require.Error(t, dial(), "stopped")
	s.Stop(t)
}

// DSN names database postgres, as user postgres, without TLS, at addr.
func TestDSN(t *testing.T) {
	require.Equal(t, "postgres://postgres@127.0.0.1:6543/postgres?sslmode=disable", pgtest.DSN("127.0.0.1:6543"))
}
