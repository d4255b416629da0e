package paygate

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// The request builders refuse what they cannot build, with no request: a
// key that is not valid (nothing to sign with), a target that is not a URL.
func TestCallbackRequestBuildersRefuse(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	fields := callbackFields("INV-Q", "GWQ", StatusSuccess, "00")
	for _, tc := range []struct {
		name  string
		build func() (any, error)
		want  error // nil: any error
	}{
		{name: "callback, zero key", build: func() (any, error) { return NewCallbackRequest(Key{}, "/r", fields) }, want: errZeroKey},
		{name: "callback, bad target", build: func() (any, error) { return NewCallbackRequest(key, "http://[::1", fields) }},
		{name: "return, bad target", build: func() (any, error) { return NewReturnRequest("http://[::1", url.Values{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.build()
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
			require.Nil(t, r)
		})
	}
}
