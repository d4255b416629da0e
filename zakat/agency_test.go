package zakat

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The two sets are B2's codes under the document's brand and the real one,
// in B2's order, and only the document's are Valid.
func TestAgencySets(t *testing.T) {
	for _, tt := range []struct {
		name  string
		got   []Agency
		want  []Agency
		valid bool
	}{
		{name: "document", got: Agencies(), want: []Agency{"BANKLZS", "BANKPPZ", "BANK"}, valid: true},
		{name: "document by brand", got: BrandAgencies("BANK"), want: Agencies(), valid: true},
		{name: "real service", got: ADBAgencies(), want: []Agency{"ADBLZS", "ADBPPZ", "ADB"}},
		{name: "real service by brand", got: BrandAgencies("ADB"), want: ADBAgencies()},
		{name: "another brand", got: BrandAgencies("XB"), want: []Agency{"XBLZS", "XBPPZ", "XB"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.got)
			for _, a := range tt.got {
				require.Equal(t, tt.valid, a.Valid(), a)
			}
		})
	}
	require.Equal(t, []Agency{AgencyLZS, AgencyPPZ, AgencyTest}, Agencies())
	require.Equal(t, []Agency{AgencyADBLZS, AgencyADBPPZ, AgencyADBTest}, ADBAgencies())
	for _, a := range []Agency{"", "bank", "BANKLZS ", "BANKX"} {
		require.False(t, a.Valid(), a)
	}
}

// The lists are the caller's to change.
func TestAgencyListsAreCopies(t *testing.T) {
	Agencies()[0] = "X"
	ADBAgencies()[0] = "X"
	require.Equal(t, AgencyLZS, Agencies()[0])
	require.Equal(t, AgencyADBLZS, ADBAgencies()[0])
	require.True(t, AgencyLZS.Valid())
}

func TestParseAgencies(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []Agency
	}{
		{in: "", want: nil},
		{in: " \t ", want: nil},
		{in: "ADBLZS,ADBPPZ,ADB", want: ADBAgencies()},
		{in: " ADBLZS , ADBPPZ,ADB ", want: ADBAgencies()},
		{in: "ADB", want: []Agency{"ADB"}},
		{in: "ADB,,X", want: []Agency{"ADB", "", "X"}},
		{in: ",", want: []Agency{"", ""}},
		{in: "A B", want: []Agency{"A B"}},
	} {
		require.Equal(t, tt.want, ParseAgencies(tt.in), "%q", tt.in)
	}
}

// ParseAgencies reads PAYGATE_WEBHOOK_AGENCIES and the CLI's flag: any
// text gives one code per comma-separated part, trimmed, and a list of
// trimmed non-empty codes joined by commas reads back as itself.
func FuzzParseAgencies(f *testing.F) {
	for _, s := range []string{"", " ", "ADBLZS,ADBPPZ,ADB", " a , b ", ",,", "\xff,\u00a0X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		codes := ParseAgencies(list)
		if strings.TrimSpace(list) == "" {
			require.Nil(t, codes)
			return
		}
		parts := strings.Split(list, ",")
		require.Len(t, codes, len(parts))
		for i, c := range codes {
			require.Equal(t, strings.TrimSpace(parts[i]), string(c))
		}
		names := make([]string, len(codes))
		for i, c := range codes {
			names[i] = string(c)
		}
		if joined := strings.Join(names, ","); strings.TrimSpace(joined) != "" {
			require.Equal(t, codes, ParseAgencies(joined))
		}
	})
}
