package scrub

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A URL fit for an error holds no credential: user information, a secret
// query parameter, wherever a mistyped URL puts them (after a scheme with
// one slash, three or none, behind a ';', in the fragment).
func TestURL(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{name: "user information", raw: "https://user:s3cret@pay.example.my/p?x=1", want: "https://%5BREDACTED%5D@pay.example.my/p?x=1"},
		{name: "a signature", raw: "https://pay.example.my/p?signature=s3cret&x=1", want: "https://pay.example.my/p?signature=[REDACTED]&x=1"},
		{name: "a key in upper case", raw: "https://pay.example.my/p?API_KEY=s3cret", want: "https://pay.example.my/p?API_KEY=[REDACTED]"},
		{name: "an escaped name", raw: "https://pay.example.my/p?%74oken=s3cret", want: "https://pay.example.my/p?%74oken=[REDACTED]"},
		{name: "a name that does not unescape", raw: "https://pay.example.my/p?a%zz=s3cret"},
		{name: "no slash after the scheme", raw: "https:user:s3cret@pay.example.my", want: "https:[REDACTED]@pay.example.my"},
		{name: "one slash after the scheme", raw: "https:/user:s3cret@pay.example.my"},
		{name: "three slashes after the scheme", raw: "https:///user:s3cret@pay.example.my"},
		{name: "a signature behind a semicolon", raw: "https://pay.example.my/?a=1;signature=s3cret", want: "https://pay.example.my/?a=1;signature=[REDACTED]"},
		{name: "a signature in the fragment", raw: "https://pay.example.my/#signature=s3cret"},
		{name: "a signature behind a leading '&'", raw: "https://pay.example.my/p?&signature=s3cret", want: "https://pay.example.my/p?&signature=[REDACTED]"},
		{name: "a token behind a leading ';'", raw: "https://pay.example.my/p?;token=s3cret", want: "https://pay.example.my/p?;token=[REDACTED]"},
		{name: "an empty query and fragment", raw: "https://pay.example.my/p?#", want: "https://pay.example.my/p?"},
		{name: "an empty user before an '@', no host", raw: "https:@pay.example.my", want: "https:[REDACTED]@pay.example.my"},
		{name: "an @ in the path of a URL with a host", raw: "https://pay.example.my/a@b?x=1", want: "https://pay.example.my/a@b?x=1"},
		{name: "a plain parameter kept", raw: "https://pay.example.my/p?refno=R1", want: "https://pay.example.my/p?refno=R1"},
		{name: "a URL that does not parse", raw: "https://user:s3cret@pay example.my/", want: "(a URL that does not parse)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := URL(tc.raw)
			require.NotContains(t, got, "s3cret")
			if tc.want != "" {
				require.Equal(t, tc.want, got)
			}
		})
	}
}

// SecretParam knows every credential parameter, in any case, and nothing
// else.
func TestSecretParam(t *testing.T) {
	for _, name := range []string{"signature", "token", "auth_token", "authtoken", "password", "api_key", "apikey", "key", "Signature", "TOKEN"} {
		require.True(t, SecretParam(name), name)
	}
	for _, name := range []string{"", "refno", "exp", "agency", "keys", "signatures"} {
		require.False(t, SecretParam(name), name)
	}
}
