package gatewaytest

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// Whichever encoder the gateway signs with, and in either case of hex, the
// handler verifies and fulfils the public sample's reference once. The
// sample holds spaces (as does the fpx field's buyer name), so the RFC 3986
// message differs from the form one.
func TestCallbackEncodings(t *testing.T) {
	const ref = "test123~881225-08-1234~12 Jalan Foo~#Sample*RefNo"
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{name: "Go form encoding"},
		{name: "PHP urlencode", opts: []Option{WithCallbackEncoding(EncodingPHP)}},
		{name: "WHATWG form serializer", opts: []Option{WithCallbackEncoding(EncodingWHATWG)}},
		{name: "RFC 3986 (the public PHP client's encoding)", opts: []Option{WithCallbackEncoding(EncodingRFC3986)}},
		{name: "upper-case hex", opts: []Option{WithUpperCaseSignature()}},
		{name: "PHP urlencode, upper-case hex, joined refNo", opts: []Option{WithCallbackEncoding(EncodingPHP), WithUpperCaseSignature(), WithCallbackRefNo(RefNoJoined)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, append([]Option{WithRefNoTildes(), WithMaxAttempts(2)}, tc.opts...)...)
			m := newMerchant(t, sb)
			payAndRequireFulfilled(t, sb, m, ref, "test123")
		})
	}
}

// A paid callback whose fields hold a space, signed over the RFC 3986
// message (space as %20, as the public PHP client signs), is fulfilled by a
// CallbackHandler at the first attempt, and the signature is not the one of
// the form message (space as +): the sandbox really signed the other way.
func TestCallbackSignedInRFC3986(t *testing.T) {
	sb := newSandbox(t, WithCallbackEncoding(EncodingRFC3986), WithMaxAttempts(2))
	m := newMerchant(t, sb)
	payAndRequireFulfilled(t, sb, m, "INV 7", "INV 7")

	fields, err := sb.signCallback(url.Values{"refNo": {"INV 7"}, "status": {"success"}})
	require.NoError(t, err)
	formSigned, err := SignCallback(sb.Key(), url.Values{"refNo": {"INV 7"}, "status": {"success"}})
	require.NoError(t, err)
	require.NotEqual(t, formSigned.Get("signature"), fields.Get("signature"))
}

// payAndRequireFulfilled posts a signed order for ref to the sandbox's
// checkout, pays it, and requires that the merchant fulfilled base once
// from a callback verified at its first attempt.
func payAndRequireFulfilled(t *testing.T, sb *Server, m *merchant, ref, base string) {
	t.Helper()
	form, err := paygate.SignForm(sb.Key(), url.Values{"agency": {sb.Agency}, "refNo": {ref}, "amount": {"2.00"},
		"email": {"sdk@example.com"}, "returnUrl": {m.srv.URL + "/return"}}, time.Now())
	require.NoError(t, err)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(sb.URL+paths.Checkout, form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.NoError(t, sb.Pay(base, paygate.StatusSuccess))
	sb.Settle()
	require.Equal(t, map[string]int{base: 1}, m.fulfilled)
	log := sb.Callbacks()
	require.Len(t, log, 1)
	require.Equal(t, 200, log[0].Attempts[0].StatusCode, "verified at the first attempt")
}
