package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// A state saved is the state loaded; a missing file is an empty state
// (not found); a file listen did not write is refused with why.
func TestListenState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	st, found, err := loadState(path)
	require.NoError(t, err)
	require.False(t, found)
	require.Empty(t, st.forwarded)
	st.forwarded[orderID{ref: "B~x", orderNo: "SB2"}] = paygate.StatusSuccess
	st.forwarded[orderID{ref: "A", orderNo: ""}] = paygate.StatusPending
	require.NoError(t, st.save(path))
	again, found, err := loadState(path)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, st.forwarded, again.forwarded)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	for _, tc := range []struct{ name, body, want string }{
		{name: "not JSON", body: "forwarded", want: "invalid character"},
		{name: "an unknown field", body: `{"forwarded":[],"key":"x"}`, want: "unknown field"},
		{name: "no refNo", body: `{"forwarded":[{"orderNo":"1","status":"success"}]}`, want: "entry 0: no refNo"},
		{name: "a status of no callback", body: `{"forwarded":[{"refNo":"A","status":""}]}`, want: "is not success, pending or failed"},
		{name: "an order twice", body: `{"forwarded":[{"refNo":"A","status":"success"},{"refNo":"A","status":"failed"}]}`, want: "entry 1: order A  listed twice"},
		{name: "two documents", body: `{"forwarded":[]} {}`, want: "data after the state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeState([]byte(tc.body))
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, _, err = loadState(filepath.Join(dir, "missing-dir", "s.json"))
	require.ErrorContains(t, err, "cannot be written")
}

// The state file is read from disk: whatever it holds, decodeState does
// not panic, and what it accepts encodes to a state it reads back the
// same.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"forwarded":[{"refNo":"A~b","orderNo":"SB1","status":"success"}]}`))
	f.Add([]byte(`{"forwarded":null}`))
	f.Add([]byte(`{"forwarded":[{"refNo":"A","status":"pending"},{"refNo":"A","orderNo":"2","status":"failed"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeState(b)
		if err != nil {
			return
		}
		again, err := decodeState(st.encode())
		require.NoError(t, err)
		require.Equal(t, st.forwarded, again.forwarded)
	})
}
