package paygate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validEmail takes a plain addr-spec and nothing else, at every limit.
func TestValidEmail(t *testing.T) {
	local64, label63 := strings.Repeat("a", 64), strings.Repeat("b", 63)
	long := local64 + "@" + strings.Repeat(label63+".", 2) + strings.Repeat("c", 254-64-1-64*2) // 254 bytes
	for _, tt := range []struct {
		email string
		valid bool
	}{
		{email: "a@b.co", valid: true},
		{email: "first.last@example.com", valid: true},
		{email: "x+tag@mail.example.my", valid: true},
		{email: "!#$%&'*+-/=?^_`{|}~@example.com", valid: true},
		{email: "a@localhost", valid: true},
		{email: "a@a-b.c-d", valid: true},
		{email: "A1@B2.C3", valid: true},
		{email: local64 + "@b.co", valid: true},
		{email: "a@" + label63 + ".co", valid: true},
		{email: long, valid: true},
		{email: long + "c"},
		{email: local64 + "a@b.co"},
		{email: "a@" + label63 + "b.co"},
		{email: ""},
		{email: "plain"},
		{email: "a@"},
		{email: "@b.com"},
		{email: "a@@b.com"},
		{email: "a@b@c.com"},
		{email: "a b@c.com"},
		{email: ".a@b.co"},
		{email: "a.@b.co"},
		{email: "a..b@c.co"},
		{email: `"a"@b.co`},
		{email: "a(c)@b.co"},
		{email: "Name <a@b.co>"},
		{email: "a@[127.0.0.1]"},
		{email: "a@b.co."},
		{email: "a@.b.co"},
		{email: "a@b..co"},
		{email: "a@-b.co"},
		{email: "a@b-.co"},
		{email: "a@b_c.co"},
		{email: "a@b.co\n"},
		{email: "é@b.co"},
		{email: "a@bé.co"},
	} {
		require.Equal(t, tt.valid, validEmail(tt.email), "%q", tt.email)
	}
}
