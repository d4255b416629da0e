package paygate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Plain http is allowed only to this machine: isLoopback knows its names
// and nothing else.
func TestIsLoopback(t *testing.T) {
	for _, tt := range []struct {
		host     string
		loopback bool
	}{
		{host: "localhost", loopback: true},
		{host: "127.0.0.1", loopback: true},
		{host: "127.3.4.5", loopback: true},
		{host: "::1", loopback: true},
		{host: ""},
		{host: "localhost.example.com"},
		{host: "LOCALHOST.evil"},
		{host: "10.0.0.1"},
		{host: "0.0.0.0"},
		{host: "::"},
		{host: "pay.tulus.my"},
		{host: "127.0.0.1.nip.io"},
	} {
		require.Equal(t, tt.loopback, isLoopback(tt.host), "%q", tt.host)
	}
}

// serviceURL takes an absolute https URL, or http to a loopback host, with
// no query, fragment or user information, and drops a trailing slash.
func TestServiceURL(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want string // "" when refused
	}{
		{raw: "https://pay.example.my", want: "https://pay.example.my"},
		{raw: "https://pay.example.my/base/", want: "https://pay.example.my/base"},
		{raw: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{raw: "http://localhost/", want: "http://localhost"},
		{raw: "http://pay.example.my"},
		{raw: "ftp://pay.example.my"},
		{raw: "pay.example.my"},
		{raw: "https://pay.example.my?x=1"},
		{raw: "https://pay.example.my?"}, // an empty query: the paths would follow the '?'
		{raw: "https://pay.example.my/base/?"},
		{raw: "https://pay.example.my#", want: "https://pay.example.my"},
		{raw: "https://pay.example.my#f"},
		{raw: "https://user:pw@pay.example.my"},
		{raw: "https://"},
	} {
		u, err := serviceURL("WithBaseURL", tt.raw)
		if tt.want == "" {
			require.Error(t, err, "%q", tt.raw)
			require.Contains(t, err.Error(), "WithBaseURL", "the error names the option")
			continue
		}
		require.NoError(t, err, "%q", tt.raw)
		require.Equal(t, tt.want, u.String())
	}
}
