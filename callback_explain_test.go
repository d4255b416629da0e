package paygate

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ExplainCallback gives, for every candidate message, the signature the key
// gives it, marks the one the received signature matches exactly when
// VerifyCallback accepts, and never shows the key.
func TestExplainCallback(t *testing.T) {
	key, err := ParseKey(testKeyUUID)
	require.NoError(t, err)
	base := url.Values{"status": {"success"}, "orderNo": {"SB1"}, "refNo": {"INV-1~cart 7"}, "amount": {"10.00"}}
	signed, err := SignCallback(key, base)
	require.NoError(t, err)
	good := signed.Get("signature")
	for _, tc := range []struct {
		name     string
		sig      []string // nil: no signature field
		matchAt  int      // the candidate that matches, or -1
		received string
	}{
		{name: "genuine", sig: []string{good}, received: good},
		{name: "genuine, upper-case hex", sig: []string{strings.ToUpper(good)}, received: strings.ToUpper(good)},
		{name: "wrong", sig: []string{"0123456789abcdef"}, matchAt: -1, received: "0123456789abcdef"},
		{name: "not hex", sig: []string{"zz"}, matchAt: -1, received: "zz"},
		{name: "missing", matchAt: -1},
		{name: "given twice", sig: []string{good, good}, matchAt: -1, received: good},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{}
			for k, v := range base {
				form[k] = v
			}
			if tc.sig != nil {
				form["signature"] = tc.sig
			}
			received, cands, err := ExplainCallback(form, key)
			require.NoError(t, err)
			require.Equal(t, tc.received, received)
			msgs, err := CallbackMessages(form)
			require.NoError(t, err)
			require.Len(t, cands, len(msgs), "a field holds ~: the encoder variants too")
			require.Greater(t, len(cands), 1)
			for i, c := range cands {
				require.Equal(t, msgs[i], c.SignedMessage)
				require.Len(t, c.Expected, 16)
				require.Equal(t, i == tc.matchAt, c.Matches, "candidate %d", i)
				require.NotContains(t, c.Message+c.Expected, strings.ReplaceAll(testKeyUUID, "-", ""))
			}
			require.Equal(t, good, cands[0].Expected, "the canonical message's signature is what SignCallback sends")
			require.Equal(t, tc.matchAt >= 0, VerifyCallback(form, key) == nil, "explained as VerifyCallback judges")
		})
	}
	_, _, err = ExplainCallback(base, Key{})
	require.ErrorIs(t, err, ErrInvalidKey)
}
