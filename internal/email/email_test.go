package email

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValid takes a plain addr-spec at its limits and refuses the rest
// (the root's TestValidEmail holds the rule in full).
func TestValid(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"name@example.com", true},
		{"a.b+c!#$%&'*/=?^_`{|}~-@x.my", true},
		{strings.Repeat("a", 64) + "@x.my", true},
		{strings.Repeat("a", 65) + "@x.my", false},
		{"a@" + strings.Repeat("b", 63) + ".my", true},
		{"a@" + strings.Repeat("b", 64) + ".my", false},
		{"a@" + strings.Repeat("b.", 126) + "my", false}, // 256 characters
		{"a@b-c.my", true},
		{"a@-b.my", false},
		{"a@b-.my", false},
		{"a@b..my", false},
		{"a@b.my.", false},
		{"a@", false},
		{"@b.my", false},
		{".a@b.my", false},
		{"a.@b.my", false},
		{"a..b@b.my", false},
		{"\"a\"@b.my", false},
		{"a@[127.0.0.1]", false},
		{"A <a@b.my>", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.ok, Valid(tt.in), "%q", tt.in)
	}
}
