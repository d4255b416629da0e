//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/testbound"
)

// bigTx is one valid transaction of about 500 bytes, its orderno cut out.
var bigTx = [2]string{
	`{"agency":"BANKLZS","orderno":"`,
	`","amount":10.50,"name":"Ahmad bin Ali","email":"ahmad@example.com","time":"2026-11-22T10:30:00+08:00","status":"success",` +
		`"data":{"email":"ahmad@example.com","zakat_name":"Ahmad bin Ali","zakat_ic_no":"900101145678","zakat_state":"selangor",` +
		`"zakat_type":"zakat_fitrah","zakat_year":"2026","zakat_phone":"0123456789","zakat_address":"No. 1, Jalan Satu, Taman Dua, Seksyen Tiga",` +
		`"zakat_postcode":"40000","zakat_city":"Shah Alam","zakat_amount":"10.50","zakat_rate":"2.625","zakat_dependant":"4"}}`,
}

// writeBigBatch writes a batch of n transactions to w, transaction
// repeat[0] carrying the orderno of transaction repeat[1], and returns how
// many bytes it wrote.
func writeBigBatch(w io.Writer, n int, repeat [2]int) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	b := []byte(`{"$schema":"urn:paygate:bank-webhook:v1","transactions":[`)
	for i := range n {
		no := i
		if i == repeat[0] {
			no = repeat[1]
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, bigTx[0]...)
		b = append(b, "ORD-"...)
		b = strconv.AppendInt(b, int64(1_000_000_000+no), 10)
		b = append(b, bigTx[1]...)
		if i == n-1 {
			b = append(b, "]}"...)
		}
		k, err := bw.Write(b)
		written += int64(k)
		if err != nil {
			return written, err
		}
		b = b[:0]
	}
	return written, bw.Flush()
}

// webhook validate checks a 1 GB batch of 2,000,000 transactions from its
// standard input in at most 64 MB, and finds an orderno repeated at the
// last transaction from the fourth. It builds the tool and runs it as a
// process, to read the process's peak memory (rusage maxrss). The figure
// is one of an otherwise idle machine: under the race detector's run of
// every package at once, the collector's CPU limiter lets the heap past
// its soft limit (97 MB was seen), so that run skips it and .ci/run runs it
// alone. A soak (testbound.SoakVar): it writes and checks 1 GB.
func TestWebhookValidateBigBatch(t *testing.T) {
	testbound.Soak(t, "TestWebhookValidate and the root's ValidateBatchReader tests")
	if raceDetector() {
		t.Skip("peak memory is measured alone, without the race detector's run of every package (.ci/run)")
	}
	const n, maxRSS = 2_000_000, 64 << 20
	bin := filepath.Join(t.TempDir(), "paygate")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "webhook", "validate", "-")
	spill := t.TempDir()
	cmd.Env = append(os.Environ(), "TMPDIR="+spill)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, cmd.Start())
	size, werr := writeBigBatch(stdin, n, [2]int{n - 1, 3})
	require.NoError(t, werr)
	require.NoError(t, stdin.Close())
	err = cmd.Wait()
	elapsed := time.Since(start)

	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "want exit status 1, got %v; stderr %s", err, stderr.String())
	require.Equal(t, exitInvalid, exit.ExitCode(), stderr.String())
	require.Equal(t, fmt.Sprintf("-: 1 problem\n  /transactions/%d/orderno: must be unique in the batch (also at /transactions/3/orderno) (value \"ORD-1000000003\")\n", n-1), stdout.String())
	require.Empty(t, stderr.String())
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("%d transactions, %d bytes: peak RSS %.1f MB, %v", n, size, float64(rss)/1e6, elapsed.Round(time.Millisecond))
	require.Greater(t, size, int64(900e6))
	require.LessOrEqual(t, rss, int64(maxRSS), "peak RSS of webhook validate")
	left, err := os.ReadDir(spill)
	require.NoError(t, err)
	require.Empty(t, left, "the spill file is removed")
}

// raceDetector reports whether the test binary was built with -race.
func raceDetector() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
