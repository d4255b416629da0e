package gatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

// TestPayByBaseReference: Pay and Complete take the reference as sent or
// its base part, which must name one order.
func TestPayByBaseReference(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, err := sb.Client()
	require.NoError(t, err)
	ctx := context.Background()
	for _, extra := range []string{"a", "b"} {
		o := m.order("INV-9")
		o.ExtraData = extra
		_, err := client.CreateOrder(ctx, o)
		require.NoError(t, err)
	}
	_, err = client.CreateOrder(ctx, m.order("INV-10"))
	require.NoError(t, err)

	require.ErrorContains(t, sb.Pay("INV-9", paygate.StatusSuccess), "INV-9~a, INV-9~b", "an ambiguous base reference is refused")
	require.ErrorContains(t, sb.Pay("INV-1", paygate.StatusSuccess), "no order", "a prefix is not a base reference")
	require.NoError(t, sb.Pay("INV-9~b", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("INV-10", paygate.StatusPending))
	require.NoError(t, sb.Complete("INV-10", paygate.StatusSuccess))
	sb.Settle()
	require.Equal(t, map[string]int{"INV-9": 1, "INV-10": 1}, m.fulfilled)
}

// TestRefNoWithSeveralTildes: an order whose refNo holds several ~ (the
// public sample's shape) is refused by default, accepted behind
// WithRefNoTildes, and its verified success is fulfilled once under the
// base reference with the rest as extra, in either callback form; the
// report and the lookup split it the same way.
func TestRefNoWithSeveralTildes(t *testing.T) {
	const ref = "test123~881225-08-1234~12 Jalan Foo~#Sample RefNo"
	for _, tc := range []struct {
		name   string
		opts   []Option
		status int
	}{
		{name: "refused by default", status: http.StatusBadRequest},
		{name: "accepted, split callback", opts: []Option{WithRefNoTildes()}, status: http.StatusSeeOther},
		{name: "accepted, joined callback", opts: []Option{WithRefNoTildes(), WithCallbackRefNo(RefNoJoined)}, status: http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			var mu sync.Mutex
			var got []string
			h := &paygate.CallbackHandler{
				Keys:   []paygate.Key{sb.Key()},
				Logger: slog.New(slog.DiscardHandler),
				Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, cb.RefNo+" | "+cb.ExtraData+" | "+fmt.Sprint(cb.Consistent()))
					return nil
				}),
			}
			shop := httptest.NewServer(h)
			t.Cleanup(shop.Close)
			form, err := paygate.SignForm(sb.Key(), url.Values{
				"agency": {sb.Agency}, "refNo": {ref}, "amount": {"2.00"},
				"email": {"sdk@example.com"}, "returnUrl": {shop.URL + "/return"},
			}, time.Now())
			require.NoError(t, err)
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noRedirect.PostForm(sb.URL+paths.Checkout, form)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status != http.StatusSeeOther {
				return
			}
			require.NoError(t, sb.Pay("test123", paygate.StatusSuccess))
			sb.Settle()
			require.Equal(t, []string{"test123 | 881225-08-1234~12 Jalan Foo~#Sample RefNo | true"}, got)

			client, err := sb.Client()
			require.NoError(t, err)
			rec, err := client.LookupOrderByRefNo(context.Background(), ref)
			require.NoError(t, err)
			p, err := rec.Payment()
			require.NoError(t, err)
			require.Equal(t, "test123", p.RefNo)
			require.Equal(t, "881225-08-1234~12 Jalan Foo~#Sample RefNo", p.ExtraData)
			require.Equal(t, paygate.StatusSuccess, p.Status)
		})
	}
}

// A sandbox that checks POSTs signed with their path accepts a client with
// WithPOSTSignedWithPath and refuses the protocol's default, and the other
// way round: the two rules are told apart.
func TestPOSTSigningModes(t *testing.T) {
	for _, tt := range []struct {
		name           string
		sandboxPath    bool
		clientPath     bool
		wantOrder, qrc int
	}{
		{name: "both the protocol's rule", sandboxPath: false, clientPath: false, wantOrder: http.StatusSeeOther, qrc: http.StatusOK},
		{name: "both with the path", sandboxPath: true, clientPath: true, wantOrder: http.StatusSeeOther, qrc: http.StatusOK},
		{name: "client with path, sandbox without", sandboxPath: false, clientPath: true, wantOrder: http.StatusForbidden, qrc: http.StatusForbidden},
		{name: "client without path, sandbox with", sandboxPath: true, clientPath: false, wantOrder: http.StatusForbidden, qrc: http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.sandboxPath {
				opts = append(opts, WithPOSTSignedWithPath())
			}
			sb := newSandbox(t, opts...)
			var copts []paygate.Option
			if tt.clientPath {
				copts = append(copts, paygate.WithPOSTSignedWithPath())
			}
			client, err := sb.Client(copts...)
			require.NoError(t, err)
			order := paygate.Order{RefNo: "INV-P", Amount: 1000, Email: "a@example.com", ReturnURL: "http://127.0.0.1:1/return"}
			res, err := client.CreateOrder(context.Background(), order)
			if tt.wantOrder == http.StatusSeeOther {
				require.NoError(t, err)
				require.Equal(t, tt.wantOrder, res.StatusCode)
			} else {
				var apiErr *paygate.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, tt.wantOrder, apiErr.StatusCode)
			}
			_, err = client.GenerateQR(context.Background(), paygate.QRRequest{RefNo: "INV-Q", Amount: 1000, Category: "fpx"})
			if tt.qrc == http.StatusOK {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, paygate.ErrUnauthorized)
			}
		})
	}
}

// Unsigned orders (a client without an API key) are accepted only by a
// sandbox told to, and a present signature must still verify there.
func TestUnsignedOrders(t *testing.T) {
	for _, accept := range []bool{false, true} {
		var opts []Option
		if accept {
			opts = append(opts, WithUnsignedOrders())
		}
		sb := newSandbox(t, opts...)
		client, err := paygate.NewClient(paygate.WithAgency(sb.Agency), paygate.WithCheckoutURL(sb.URL))
		require.NoError(t, err)
		order := paygate.Order{RefNo: "INV-U", Amount: 1000, Email: "a@example.com", ReturnURL: "http://127.0.0.1:1/return"}
		res, err := client.CreateOrder(context.Background(), order)
		if accept {
			require.NoError(t, err)
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
		} else {
			require.ErrorIs(t, err, paygate.ErrUnauthorized)
		}
		form, err := client.CheckoutForm(order)
		require.NoError(t, err)
		form.Fields.Set("signature", "0000000000000000")
		form.Fields.Set("exp", "9999999999")
		resp, err := http.PostForm(form.Action, form.Fields)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "a wrong signature is refused even where unsigned orders are accepted")
	}
}

// An order preselecting FPX B2B under RM 2.00 is taken, as the gateway is
// said to (it hides the method), and the SDK sends it; the sandbox refuses
// it when it plays the other reading (WithB2BMinimumRefused)
// (docs/assumptions.md A-b2b-minimum).
func TestB2BMinimum(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []Option
		method string
		amount string
		want   int
	}{
		{name: "B2B under 2.00, taken", method: "fpx/b2b1", amount: "1.50", want: http.StatusSeeOther},
		{name: "B2B under 2.00, refused", opts: []Option{WithB2BMinimumRefused()}, method: "fpx/b2b1", amount: "1.99", want: http.StatusBadRequest},
		{name: "B2B in upper case, refused", opts: []Option{WithB2BMinimumRefused()}, method: "FPX/B2B1", amount: "1.00", want: http.StatusBadRequest},
		{name: "B2B at 2.00", opts: []Option{WithB2BMinimumRefused()}, method: "fpx/b2b1", amount: "2.00", want: http.StatusSeeOther},
		{name: "B2C at 1.00", opts: []Option{WithB2BMinimumRefused()}, method: "fpx/b2c", amount: "1.00", want: http.StatusSeeOther},
		{name: "deprecated WithoutB2BMinimum", opts: []Option{WithB2BMinimumRefused(), WithoutB2BMinimum()}, method: "fpx/b2b1", amount: "1.50", want: http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			form, err := paygate.SignForm(sb.Key(), url.Values{"agency": {sb.Agency}, "refNo": {"B2B-1"}, "amount": {tc.amount},
				"email": {"a@example.com"}, "returnUrl": {"https://shop.example/r"}, "pref_method": {tc.method}}, sb.cfg.now())
			require.NoError(t, err)
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noFollow.PostForm(sb.URL+paths.Checkout, form)
			require.NoError(t, err)
			var body struct {
				Errors []problem `json:"errors"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			require.Equal(t, tc.want, resp.StatusCode)
			if tc.want == http.StatusBadRequest {
				require.Equal(t, []problem{{"amount", "at least 2.00 for FPX B2B (WithB2BMinimumRefused)"}}, body.Errors)
			}
		})
	}
	sb := newSandbox(t)
	client, err := sb.Client()
	require.NoError(t, err)
	_, err = client.CreateOrder(context.Background(), paygate.Order{RefNo: "B2B-2", Amount: 150, Email: "a@example.com", ReturnURL: "https://shop.example/r", PrefMethod: "fpx/b2b1"})
	require.NoError(t, err, "the SDK sends it")
	require.Len(t, sb.Orders(), 1)
}
