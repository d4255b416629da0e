package zakat

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// b3Values reads the values docs/protocol.md B3 lists for field, in order.
func b3Values(t *testing.T, field string) []string {
	t.Helper()
	raw, err := os.ReadFile("../docs/protocol.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `" + field + "` \\| (.+) \\|$").FindStringSubmatch(string(raw))
	require.NotNil(t, row, "docs/protocol.md has no row for %s", field)
	return strings.Split(row[1], ", ")
}

// States are B3's zakat_state values, in its order, and each is Valid.
func TestStates(t *testing.T) {
	var got []string
	for _, s := range States() {
		require.True(t, s.Valid(), s)
		got = append(got, string(s))
	}
	require.Equal(t, b3Values(t, "zakat_state"), got)
	require.Equal(t, []State{Selangor, KualaLumpur, Perak}, []State{"selangor", "kuala_lumpur", "perak"})
	States()[0] = "x"
	require.Equal(t, Johor, States()[0], "a fresh slice each call")
}

func TestStateValid(t *testing.T) {
	for _, tt := range []struct {
		s    State
		want bool
	}{
		{s: NegeriSembilan, want: true},
		{s: "putrajaya", want: true},
		{s: "", want: false},
		{s: "Selangor", want: false},
		{s: "selangor ", want: false},
		{s: "kuala lumpur", want: false},
		{s: State(ZakatPerak), want: false},
	} {
		require.Equal(t, tt.want, tt.s.Valid(), "%q", tt.s)
	}
}
