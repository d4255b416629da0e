package paygate

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testKeyUUID is a fixed API key for tests.
const testKeyUUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"

func mustKey(t testing.TB, uuid string) Key {
	t.Helper()
	k, err := ParseKey(uuid)
	require.NoError(t, err)
	return k
}

func TestParseKey(t *testing.T) {
	want := mustKey(t, testKeyUUID)
	tests := []struct {
		in      string
		wantErr string
	}{
		{in: testKeyUUID},
		{in: strings.ToUpper(testKeyUUID)},
		{in: strings.ReplaceAll(testKeyUUID, "-", "")},
		{in: "", wantErr: "0 hex digits, want 32"},
		{in: testKeyUUID[:35], wantErr: "31 hex digits, want 32"},
		{in: testKeyUUID + "0", wantErr: "more than 32 hex digits"},
		{in: "3f2504e0-4f89-11d3-9a0c-0305e82c330g", wantErr: "non-hex character at position 36"},
		{in: "3f2504e04f89-11d3-9a0c-0305e82c3301-", wantErr: "dash at position 36"},
		{in: "3f2504e0--4f89-11d3-9a0c-0305e82c330", wantErr: "dash at position 10"},
		{in: "3f2504e0-4f8911d39a0c0305e82c3301", wantErr: "33 characters"},
		{in: " " + testKeyUUID, wantErr: "non-hex character at position 1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			k, err := ParseKey(tt.in)
			if tt.wantErr == "" {
				require.NoError(t, err)
				a, _ := signCallback(k, url.Values{"a": {"1"}})
				b, _ := signCallback(want, url.Values{"a": {"1"}})
				require.Equal(t, b, a, "same key bytes")
				return
			}
			require.ErrorIs(t, err, ErrInvalidKey)
			require.ErrorContains(t, err, tt.wantErr)
			if len(tt.in) > 8 {
				require.NotContains(t, err.Error(), tt.in[1:9], "error echoes the key")
			}
		})
	}
}

func TestKeyNeverPrints(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	holder := struct {
		Exported Key
		hidden   Key
		List     []Key
	}{key, key, []Key{key}}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	logger.Info("k", "key", key, "holder", holder)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("k", "key", key)
	outputs := []string{logs.String()}
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
		outputs = append(outputs, fmt.Sprintf(f, key), fmt.Sprintf(f, holder), fmt.Sprintf(f, &holder))
	}
	raw := strings.ReplaceAll(testKeyUUID, "-", "")
	for _, out := range outputs {
		require.NotContains(t, strings.ToLower(out), raw[:8])
		require.NotContains(t, out, "\x3f\x25\x04\xe0") // first raw bytes
		require.NotContains(t, out, "[63 37 4 224")     // raw bytes as %v of []byte
	}
	require.Equal(t, "[REDACTED]", fmt.Sprintf("%v", key))
	require.Equal(t, "[REDACTED]", fmt.Sprintf("%#v", key))
	require.Contains(t, logs.String(), "key=[REDACTED]")
}
