//go:build !purego

package paygate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEscapeVectorRuns makes sure the vector path is the one the tests of
// appendEscaped exercise on a CPU with SSSE3, and that it leaves a block it
// has no room for to appendEscapedWords.
func TestEscapeVectorRuns(t *testing.T) {
	if !haveSSSE3 {
		t.Skip("no SSSE3: appendEscaped escapes a byte at a time")
	}
	s := strings.Repeat(`{"a":"b c"}~`, 3) // 36 bytes: two blocks and a tail
	dst := make([]byte, 0, 3*len(s)+16)
	w, r := escapeVector(dst, s, encFormGo)
	require.Equal(t, 32, r)
	require.Equal(t, referenceEscape(s[:32], encFormGo), string(dst[:w]))
	w, r = escapeVector(make([]byte, 0, 3*len(s)+15), s, encFormGo)
	require.Zero(t, w+r)
}
