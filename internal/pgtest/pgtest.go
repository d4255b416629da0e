// Package pgtest starts a PostgreSQL server of a test's own, for the tests
// that restart or stop their server (never the shared one on 55432): a new
// cluster from the programs in $PAYGATE_TEST_PG_BIN (initdb, pg_ctl) in a
// temporary directory, trust auth, max_connections=200, listening on a free
// loopback port, its programs run as the postgres user when the test runs
// as root. The server is stopped (-m immediate) and its directory removed
// when the test ends. Imported only by tests, like net/http/httptest.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BinVar names the directory of PostgreSQL's programs; .ci/postgres.sh
// sets it.
const BinVar = "PAYGATE_TEST_PG_BIN"

// Server is a PostgreSQL server of the test's own.
type Server struct {
	// Addr is where the server listens: 127.0.0.1 and its port.
	Addr string

	bin, data, log string
	asPostgres     bool // root runs the server's programs as the postgres user
	stopped        bool
}

// Start initialises and starts a server, stopped and removed when t ends.
// Without BinVar it skips t, or fails it in CI (CI=true), where
// .ci/postgres.sh sets it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(BinVar)
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set in CI: .ci/postgres.sh sets it", BinVar)
		}
		t.Skipf("%s is not set: %s runs a PostgreSQL server of its own (bash .ci/run sets it)", BinVar, t.Name())
	}
	// Not t.TempDir: the server's socket goes in this directory too, and a
	// path named after the test could pass the socket path's 107 bytes.
	dir, err := os.MkdirTemp("", "paygate-pg-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), bin: bin, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "log"),
		asPostgres: os.Geteuid() == 0}
	if s.asPostgres {
		out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	s.ctl(t, "initdb", "-D", s.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
	s.ctl(t, "pg_ctl", "-D", s.data, "-l", s.log, "-w",
		"-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200", port, dir), "start")
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// RestartImmediate restarts the server as a crash would: every session
// killed, no shutdown checkpoint. It returns once the server accepts
// connections again.
func (s *Server) RestartImmediate(t testing.TB) {
	t.Helper()
	s.ctl(t, "pg_ctl", "-D", s.data, "-l", s.log, "-m", "immediate", "-w", "restart") // -l: else the server writes to our pipe
	s.stopped = false
}

// Stop stops the server as a crash would (-m immediate); a stopped server
// stays stopped. The test's end stops it too.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.stopped {
		return
	}
	s.ctl(t, "pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
	s.stopped = true
}

// DSN is the DSN of database postgres, as user postgres, at addr: a
// Server's Addr, or a proxy's in front of it.
func DSN(addr string) string {
	return "postgres://postgres@" + addr + "/postgres?sslmode=disable"
}

// ctl runs one of the server's programs and fails t if it fails.
func (s *Server) ctl(t testing.TB, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, prog), args...)
	if s.asPostgres {
		cmd = exec.Command("su", append([]string{"-s", "/bin/sh", "-c", `exec "$0" "$@"`, "postgres", "--", filepath.Join(s.bin, prog)}, args...)...)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", prog, args, out)
}
