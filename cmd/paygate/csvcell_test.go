package main

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// A cell that begins as a formula gets a leading ', unless it is a plain
// number; every other cell is as sent.
func TestSpreadsheetSafe(t *testing.T) {
	for _, tc := range []struct {
		name, cell, want string
	}{
		{name: "HYPERLINK formula", cell: `=HYPERLINK("http://evil","x")`, want: `'=HYPERLINK("http://evil","x")`},
		{name: "at-sign function", cell: "@SUM(A1:A9)", want: "'@SUM(A1:A9)"},
		{name: "plus formula", cell: "+1+cmd|' /C calc'!A0", want: "'+1+cmd|' /C calc'!A0"},
		{name: "minus formula", cell: "-2+3", want: "'-2+3"},
		{name: "DDE", cell: "=cmd|' /C calc'!A0", want: "'=cmd|' /C calc'!A0"},
		{name: "tab first", cell: "\t=1+1", want: "'\t=1+1"},
		{name: "carriage return first", cell: "\r=1+1", want: "'\r=1+1"},
		{name: "equals alone", cell: "=", want: "'="},
		{name: "sign alone", cell: "-", want: "'-"},
		{name: "exponent is not a plain number", cell: "-1e2", want: "'-1e2"},
		{name: "dot without digits after", cell: "-5.", want: "'-5."},
		{name: "dot without digits before", cell: "-.5", want: "'-.5"},
		{name: "comma decimal", cell: "-5,00", want: "'-5,00"},
		{name: "two signs", cell: "+-5", want: "'+-5"},
		{name: "number then text", cell: "-5 RM", want: "'-5 RM"},
		{name: "negative amount", cell: "-5.00", want: "-5.00"},
		{name: "positive amount", cell: "+5.00", want: "+5.00"},
		{name: "phone with country code", cell: "+60123456789", want: "+60123456789"},
		{name: "minus zero", cell: "-0", want: "-0"},
		{name: "plain amount", cell: "10.50", want: "10.50"},
		{name: "exponent without sign", cell: "1e2", want: "1e2"},
		{name: "empty", cell: "", want: ""},
		{name: "text", cell: "INV-1", want: "INV-1"},
		{name: "equals inside", cell: "a=b", want: "a=b"},
		{name: "space first", cell: " =1", want: " =1"},
		{name: "already quoted", cell: "'=1", want: "'=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, spreadsheetSafe(tc.cell))
		})
	}
}

// plainNumber is the regular expression it documents, on every string of
// up to five bytes from the bytes that matter.
func TestPlainNumberIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)
	const alphabet = "+-.09a"
	strs := []string{""}
	for n := 0; n < 5; n++ {
		for _, s := range strs {
			if len(s) == n {
				for _, c := range []byte(alphabet) {
					strs = append(strs, s+string(c))
				}
			}
		}
	}
	require.Len(t, strs, 1+6+36+216+1296+7776)
	for _, s := range strs {
		require.Equal(t, re.MatchString(s), plainNumber(s), "%q", s)
	}
}

// csvWriter makes every cell safe, header included, unless raw; the
// records it is given are not changed.
func TestCSVWriter(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  bool
		want string
	}{
		{name: "safe", want: "'=name,amount\n'@SUM(A1),-5.00\n"},
		{name: "raw", raw: true, want: "=name,amount\n@SUM(A1),-5.00\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := newCSVWriter(&b, tc.raw)
			recs := [][]string{{"=name", "amount"}, {"@SUM(A1)", "-5.00"}}
			for _, r := range recs {
				require.NoError(t, w.Write(r))
			}
			w.Flush()
			require.NoError(t, w.Error())
			require.Equal(t, tc.want, b.String())
			require.Equal(t, [][]string{{"=name", "amount"}, {"@SUM(A1)", "-5.00"}}, recs)
			back, err := csv.NewReader(&b).ReadAll()
			require.NoError(t, err)
			require.Len(t, back, 2)
		})
	}
}
