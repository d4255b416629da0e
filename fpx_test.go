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
	require.True(t, sc.Scan())
	require.True(t, strings.HasPrefix(sc.Text(), "# source: "), "the table names its source first")
	for strings.HasPrefix(sc.Text(), "#") {
		require.True(t, sc.Scan())
	}
	require.Equal(t, "code\tmeaning", sc.Text())
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
		{code: "00", want: StatusSuccess},
		{code: "", want: StatusPending}, {code: "09", want: StatusPending}, {code: "76", want: StatusPending}, {code: "99", want: StatusPending},
		{code: "51", want: StatusFailed}, {code: "1C", want: StatusFailed}, {code: "XA", want: StatusFailed}, {code: "OE", want: StatusFailed},
		{code: "0", want: StatusFailed}, {code: "000", want: StatusFailed}, {code: "zz", want: StatusFailed},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.code.Status(), "code %q", tt.code)
	}
	require.Equal(t, "", FPXCode("ZZ").Reason())
	require.Equal(t, "ZZ", FPXCode("ZZ").Describe())
	require.Equal(t, `"51"`, fmt.Sprintf("%q", FPXCode("51")), "formats as the wire code")
}

// Codes read from the embedded table, spelled out here so that a table that
// loses or changes them fails: the first, the last, pending ones, letters.
func TestFPXCodeReason(t *testing.T) {
	tests := []struct {
		code FPXCode
		want string
	}{
		{code: "00", want: "Approved"},
		{code: "09", want: "Transaction Pending"},
		{code: "51", want: "Insufficient Funds"},
		{code: "99", want: "Pending Authorization (Applicable for B2B model)"},
		{code: "1C", want: "Buyer Choose Cancel At Login Page"},
		{code: "XA", want: "Invalid Source IP Address (Applicable for B2B2 model)"},
		{code: "2X", want: "Transaction Is Canceled By Merchant"},
		{code: "", want: ""},
		{code: "xa", want: ""},
		{code: "code", want: ""}, // the header is not a code
		{code: "00\t", want: ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.code.Reason(), "code %q", tt.code)
	}
}

// A malformed table is refused naming its line, never read in part.
func TestParseFPXCodesRefuses(t *testing.T) {
	tests := []struct {
		name, tsv, want string
	}{
		{name: "no header", tsv: "00\tApproved\n", want: "line 1"},
		{name: "no tab", tsv: "code\tmeaning\n00 Approved\n", want: "line 2"},
		{name: "empty code", tsv: "code\tmeaning\n00\tApproved\n\tNothing\n", want: "line 3"},
		{name: "empty meaning", tsv: "code\tmeaning\n00\t\n", want: "line 2"},
		{name: "repeated code", tsv: "code\tmeaning\n00\tApproved\n00\tAgain\n", want: "line 3"},
		{name: "blank line", tsv: "code\tmeaning\n00\tApproved\n\n03\tInvalid Merchant\n", want: "line 3"},
		{name: "comment after the header", tsv: "# source\ncode\tmeaning\n# more\n00\tApproved\n", want: "line 3"},
		{name: "comments only", tsv: "# source\n# more\n", want: "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseFPXCodes(tt.tsv)
			require.ErrorContains(t, err, tt.want)
			require.Nil(t, m)
		})
	}
	m, err := parseFPXCodes(fpxCodesTSV)
	require.NoError(t, err, "the embedded table parses")
	require.Len(t, m, 77)
}

// The embedded table reads the same whatever its line ends: a checkout
// whose Git turns LF into CRLF (Git for Windows' core.autocrlf) embeds
// CRLF, and a table refused there would panic the first Reason.
func TestParseFPXCodesLineEnds(t *testing.T) {
	want, err := parseFPXCodes(fpxCodesTSV)
	require.NoError(t, err)
	tests := []struct {
		name, tsv string
	}{
		{name: "LF without the last", tsv: strings.TrimSuffix(fpxCodesTSV, "\n")},
		{name: "CRLF", tsv: strings.ReplaceAll(fpxCodesTSV, "\n", "\r\n")},
		{name: "CRLF without the last", tsv: strings.TrimSuffix(strings.ReplaceAll(fpxCodesTSV, "\n", "\r\n"), "\r\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFPXCodes(tt.tsv)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}
