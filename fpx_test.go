package paygate

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every code of the public table (fpx_codes.tsv) has its
// reason text, and maps to a status per the table of docs/protocol.md A2.
func TestFPXCodesTable(t *testing.T) {
	f, err := os.Open("fpx_codes.tsv")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	require.True(t, sc.Scan()) // header
	n := 0
	for sc.Scan() {
		code, meaning, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok, sc.Text())
		c := FPXCode(code)
		require.Equal(t, meaning, c.Reason(), code)
		require.Equal(t, code+" ("+meaning+")", c.Describe())
		n++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 77, n)
}

func TestFPXCodeStatus(t *testing.T) {
	tests := []struct {
		code FPXCode
		want Status
	}{
		{"00", StatusSuccess},
		{"", StatusPending}, {"09", StatusPending}, {"76", StatusPending}, {"99", StatusPending},
		{"51", StatusFailed}, {"1C", StatusFailed}, {"XA", StatusFailed}, {"OE", StatusFailed},
		{"0", StatusFailed}, {"000", StatusFailed}, {"zz", StatusFailed},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.code.Status(), "code %q", tt.code)
	}
	require.Equal(t, "", FPXCode("ZZ").Reason())
	require.Equal(t, "ZZ", FPXCode("ZZ").Describe())
	require.Equal(t, `"51"`, fmt.Sprintf("%q", FPXCode("51")), "formats as the wire code")
}
