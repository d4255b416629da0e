package paygate

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// requireSameAsJSON checks that streaming body, in windows of every given
// size, reports exactly what ValidateBatchJSON reports.
func requireSameAsJSON(t testing.TB, body []byte, chunks ...int) {
	t.Helper()
	batch, want := ValidateBatchJSON(body)
	for _, chunk := range chunks {
		for name, r := range map[string]func() io.Reader{
			"whole reads":       func() io.Reader { return bytes.NewReader(body) },
			"one byte per read": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
		} {
			n, got := validateStream(r(), chunk, WebhookValidator{})
			requireSameError(t, want, got, "%s, chunk %d", name, chunk)
			if want == nil {
				require.Equal(t, len(batch.Transactions), n, "%s, chunk %d", name, chunk)
			}
		}
	}
}

// requireSameError compares two validation results problem by problem.
func requireSameError(t testing.TB, want, got error, msg string, args ...any) {
	t.Helper()
	if want == nil {
		require.NoError(t, got, append([]any{msg}, args...)...)
		return
	}
	var w, g *ValidationError
	require.True(t, errors.As(want, &w))
	require.True(t, errors.As(got, &g), "%v", got)
	require.Equal(t, w.Problems, g.Problems, append([]any{msg}, args...)...)
}

// Streaming gives ValidateBatchJSON's answer on every test file, every
// schema-agreement case and inputs built to put a window end in every kind
// of place.
func TestValidateBatchReaderMatchesJSON(t *testing.T) {
	files, err := filepath.Glob("testdata/webhook/*.json")
	require.NoError(t, err)
	var bodies [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		bodies = append(bodies, b)
	}
	for _, m := range agreementCorpus() {
		bodies = append(bodies, m.apply(t, ZakatAgencies()))
	}
	long := strings.Repeat(`1,`, 200) + `1`
	for _, s := range []string{
		``, ` `, `[]`, `{}`, `{"transactions":[]}`, `{"transactions":[]} x`, `{"transactions":[1,2,3]}`,
		`{"x":[` + long + `],"transactions":[]}`,
		`{"transactions":[],"x":[` + long + `]}`,
		`{"transactions":[` + long + `]}`,
		`{"transactions":"` + strings.Repeat(`a,b\",`, 100) + `"}`,
		`{"transactions":[{"orderno":"a,b","agency":"BANK"},{"orderno":"a,b"}]}`,
		`{"transactions":[-,1]}`, `{"transactions":[1.,2]}`, `{"transactions":[tru,e]}`, `{,}`, `{"a":1,}`,
		`{"transactions":[{"amount":1e,"orderno":"x"}]}`, `{"transactions":[{"orderno":"\u00e9,\u002c"}]`,
		`{"transactions":[],"transactions":[` + long + `]}`, `{"$schema":[` + long + `],"transactions":[]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + strings.Repeat("é,", 50) + `"}}]}`,
		`{"transactions":[` + strings.Repeat(`{"orderno":"same"},`, 30) + `{"orderno":"same"}]}`,
	} {
		bodies = append(bodies, []byte(s))
	}
	bodies = append(bodies, benchBatch(300))
	for _, b := range bodies {
		requireSameAsJSON(t, b, 1, 2, 7, 64, 4096, windowChunk)
	}
}

// FuzzValidateBatchReader: for any input, streaming in small windows reports
// what ValidateBatchJSON reports.
func FuzzValidateBatchReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/webhook/*.json")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"x":[1,2,3],"transactions":[{"orderno":"a"},{"orderno":"a"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		done := make(chan struct{})
		go func() { defer close(done); requireSameAsJSON(t, body, 1, 5, 64) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("slow on %d bytes", len(body))
		}
	})
}
