package paygateotel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/observe"
	paygateotel "github.com/paygate-go/paygate/otel"
	"github.com/paygate-go/paygate/zakat"
)

// telemetry is an Observer with the SDK's span recorder and a manual
// metric reader behind it.
type telemetry struct {
	obs    *paygateotel.Observer
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	obs, err := paygateotel.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	return &telemetry{obs: obs, spans: spans, reader: reader}
}

// spanNames counts the ended spans by name.
func (tm *telemetry) spanNames() map[string]int {
	names := map[string]int{}
	for _, s := range tm.spans.Ended() {
		names[s.Name()]++
	}
	return names
}

// callbackSpans lists the attributes of each ended "paygate callback" span.
func (tm *telemetry) callbackSpans() []map[attribute.Key]string {
	var out []map[attribute.Key]string
	for _, s := range tm.spans.Ended() {
		if s.Name() != "paygate callback" {
			continue
		}
		m := map[attribute.Key]string{}
		for _, a := range s.Attributes() {
			m[a.Key] = a.Value.String()
		}
		out = append(out, m)
	}
	return out
}

// metrics collects the metrics: name -> the attribute set's text -> the
// sum, or the count of a histogram.
func (tm *telemetry) metrics(t *testing.T) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			points := map[string]int64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					points[p.Attributes.Encoded(attribute.DefaultEncoder())] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					points[p.Attributes.Encoded(attribute.DefaultEncoder())] += int64(p.Count)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					points[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Value
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					points[p.Attributes.Encoded(attribute.DefaultEncoder())] = int64(p.Value)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
			out[m.Name] = points
		}
	}
	return out
}

// attributeValues is every attribute value recorded: of spans, their
// events and the metrics' data points.
func (tm *telemetry) attributeValues(t *testing.T) []string {
	t.Helper()
	var vals []string
	add := func(kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			vals = append(vals, string(kv.Key)+"="+kv.Value.String())
		}
	}
	for _, s := range tm.spans.Ended() {
		vals = append(vals, s.Name(), s.Status().Description)
		add(s.Attributes())
		for _, e := range s.Events() {
			vals = append(vals, e.Name)
			add(e.Attributes)
		}
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes.ToSlice())
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes.ToSlice())
				}
			}
		}
	}
	return vals
}

// signatures records the signature of every request a client sends.
type signatures struct {
	mu   sync.Mutex
	seen []string
	next http.RoundTripper
}

func (s *signatures) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, r.URL.Query().Get("signature"))
	s.mu.Unlock()
	if r.Body != nil && r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			if f, err := url.ParseQuery(readAll(b)); err == nil {
				s.mu.Lock()
				s.seen = append(s.seen, f.Get("signature"))
				s.mu.Unlock()
			}
		}
	}
	return s.next.RoundTrip(r)
}

// shop is a merchant on the sandbox, observed.
type shop struct {
	sb      *gatewaytest.Server
	tm      *telemetry
	handler *paygate.CallbackHandler
	server  *httptest.Server
	client  *paygate.Client
	sigs    *signatures
}

func newShop(t *testing.T, opts ...gatewaytest.Option) *shop {
	t.Helper()
	sb := gatewaytest.NewServer(append([]gatewaytest.Option{gatewaytest.WithRetryInterval(20 * time.Millisecond)}, opts...)...)
	t.Cleanup(sb.Close)
	tm := newTelemetry(t)
	h := &paygate.CallbackHandler{
		Keys:              []paygate.Key{sb.Key()},
		Fulfil:            paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil }),
		ReconcileInterval: -1,
		Observer:          tm.obs,
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	sigs := &signatures{next: http.DefaultTransport}
	client, err := sb.Client(paygate.WithObserver(tm.obs), paygate.WithHTTPClient(&http.Client{Transport: sigs}))
	require.NoError(t, err)
	return &shop{sb: sb, tm: tm, handler: h, server: srv, client: client, sigs: sigs}
}

// checkout creates an order and pays it on the hosted page; the callback
// and its duplicates are delivered before it returns.
func (s *shop) checkout(t *testing.T, refNo, extra string, amount paygate.Amount) {
	t.Helper()
	res, err := s.client.CreateOrder(context.Background(), paygate.Order{RefNo: refNo, ExtraData: extra, Amount: amount,
		Email: "siti@example.com", ReturnURL: s.server.URL + "/paygate/return"})
	require.NoError(t, err)
	resp, err := http.PostForm(res.Location, url.Values{"choice": {"success"}})
	require.NoError(t, err)
	resp.Body.Close()
	s.sb.Settle()
}

// One checkout is two spans: the order's POST and its callback.
func TestCheckoutSpans(t *testing.T) {
	s := newShop(t)
	s.checkout(t, "INV-7731", "cart-9", 14990)
	require.Equal(t, map[string]int{"paygate POST /v2/checkout": 1, "paygate callback": 1}, s.tm.spanNames())
	require.Equal(t, []map[attribute.Key]string{{
		"paygate.source": "callback", "paygate.verification": "ok", "paygate.claim": "new", "paygate.hook": "ok",
		"paygate.outcome": "fulfilled", "http.response.status_code": "200",
	}}, s.tm.callbackSpans())
	for _, sp := range s.tm.spans.Ended() {
		if sp.Name() == "paygate POST /v2/checkout" {
			require.Contains(t, sp.Attributes(), attribute.Int("http.response.status_code", http.StatusSeeOther))
			require.Contains(t, sp.Attributes(), attribute.String("url.template", "/v2/checkout"))
		}
	}
	m := s.tm.metrics(t)
	require.Equal(t, map[string]int64{"paygate.claim=new": 1}, m["paygate.callback.claims"])
	require.Equal(t, map[string]int64{"paygate.hook=ok": 1}, m["paygate.callback.fulfil.duration"])
}

// The gateway's duplicate callbacks are counted as duplicate claims; a
// callback signed with another key as a verification failure.
func TestCallbackOutcomes(t *testing.T) {
	s := newShop(t, gatewaytest.WithDuplicateCallbacks(3, false))
	s.checkout(t, "INV-7732", "", 5000)
	other, err := paygate.ParseKey("00000000-0000-4000-8000-000000000001")
	require.NoError(t, err)
	forged, err := gatewaytest.NewCallbackRequest(other, s.server.URL+"/paygate/return", url.Values{
		"status": {"success"}, "refNo": {"INV-7732"}, "orderNo": {"GW-FORGED"}, "amount": {"50.00"}})
	require.NoError(t, err)
	forged.RequestURI = ""
	resp, err := http.DefaultClient.Do(forged)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	m := s.tm.metrics(t)
	require.Equal(t, map[string]int64{"paygate.claim=new": 1, "paygate.claim=duplicate": 2}, m["paygate.callback.claims"])
	require.Equal(t, map[string]int64{"paygate.verification=mismatch": 1}, m["paygate.callback.verification.failures"])
	require.Equal(t, map[string]int64{
		"paygate.outcome=fulfilled,paygate.source=callback,paygate.verification=ok":         1,
		"paygate.outcome=already_fulfilled,paygate.source=callback,paygate.verification=ok": 2,
		"paygate.outcome=,paygate.source=callback,paygate.verification=mismatch":            1,
	}, m["paygate.callback.count"])
	require.Equal(t, 4, s.tm.spanNames()["paygate callback"])
}

// A report walk and a reconciliation: one span per page and per lookup,
// the reconciliation's entries counted by outcome.
func TestReportAndReconcileSpans(t *testing.T) {
	s := newShop(t)
	s.checkout(t, "INV-7733", "cart-1", 14990)
	ctx := context.Background()
	today := time.Now().In(time.FixedZone("MYT", 8*3600))
	rows := 0
	for _, err := range s.client.Payments(ctx, paygate.ReportQuery{Start: today, End: today}) {
		require.NoError(t, err)
		rows++
	}
	require.Equal(t, 1, rows)
	rec, err := s.handler.Reconcile(ctx, s.client, []string{"INV-7733~cart-1", "INV-NONE"})
	require.NoError(t, err)
	require.Equal(t, map[paygate.Outcome]int{paygate.OutcomeAlreadyFulfilled: 1, paygate.OutcomeNotFound: 1}, rec.Counts)
	_, err = s.handler.ReconcileReport(ctx, s.client, paygate.ReportQuery{Start: today, End: today})
	require.NoError(t, err)

	names := s.tm.spanNames()
	require.Equal(t, 2, names["paygate GET /api/report/v1/payment"], "%v", names) // the walk's page and ReconcileReport's
	require.Equal(t, 2, names["paygate GET /api/report/v1/fpxrequest"], "%v", names)
	require.Equal(t, 2, names["paygate reconcile"], "%v", names)
	require.Equal(t, 3, names["paygate callback"], "%v", names) // the callback and two reconciled records
	m := s.tm.metrics(t)
	require.Equal(t, map[string]int64{"paygate.outcome=already_fulfilled": 2, "paygate.outcome=not_found": 1}, m["paygate.reconcile.entries"])

	// The lookups are children of their reconciliation's span.
	parents := map[string]string{}
	for _, sp := range s.tm.spans.Ended() {
		parents[sp.SpanContext().SpanID().String()] = sp.Name()
	}
	for _, sp := range s.tm.spans.Ended() {
		if sp.Name() == "paygate GET /api/report/v1/fpxrequest" {
			require.Equal(t, "paygate reconcile", parents[sp.Parent().SpanID().String()])
		}
	}
}

// A webhook send: its span, each batch's call as a child, the service's
// Retry-After waited and counted, the transactions counted by state.
func TestWebhookSendSpans(t *testing.T) {
	draws := []float64{0.1} // the first request is refused with 503 and Retry-After: 1
	var mu sync.Mutex
	sb := gatewaytest.NewServer(gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{Error503: 0.5, Rand: func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if len(draws) == 0 {
			return 0.9
		}
		r := draws[0]
		draws = draws[1:]
		return r
	}}))
	t.Cleanup(sb.Close)
	tm := newTelemetry(t)
	sender, err := sb.WebhookSender(paygate.WithObserver(tm.obs), paygate.WithBatchSize(1))
	require.NoError(t, err)
	report, err := sender.Send(context.Background(), webhookTxs())
	require.NoError(t, err)
	require.Len(t, report.Accepted, 2)

	names := tm.spanNames()
	require.Equal(t, 1, names["paygate webhook send"], "%v", names)
	require.Equal(t, 2, names["paygate POST /api/bank/webhook"], "%v", names)
	m := tm.metrics(t)
	require.Equal(t, map[string]int64{"paygate.transaction.state=accepted": 2}, m["paygate.webhook.transactions"])
	require.Equal(t, map[string]int64{"http.request.method=POST,http.response.status_code=503,url.template=/api/bank/webhook": 1}, m["paygate.client.retries"])
	require.Equal(t, map[string]int64{"paygate.retry_after=true,url.template=/api/bank/webhook": 1}, m["paygate.client.retry.wait"])
}

// The outbox's rounds are counted by what was recorded, and its depth,
// dead count and oldest age are gauges holding the last reading.
func TestOutboxMetrics(t *testing.T) {
	tm := newTelemetry(t)
	ctx := context.Background()
	tm.obs.OutboxRound(ctx, observe.OutboxRound{Taken: 10, Accepted: 7, Dead: 1, Retried: 2})
	tm.obs.OutboxRound(ctx, observe.OutboxRound{Taken: 3, Accepted: 3})
	tm.obs.OutboxStats(ctx, observe.OutboxStats{Depth: 40, Dead: 2, OldestAge: 90 * time.Second})
	tm.obs.OutboxStats(ctx, observe.OutboxStats{Depth: 12, Dead: 1, OldestAge: 61 * time.Second})
	m := tm.metrics(t)
	require.Equal(t, map[string]int64{"paygate.transaction.state=done": 10, "paygate.transaction.state=dead": 1, "paygate.transaction.state=retried": 2}, m["paygate.outbox.transactions"])
	require.Equal(t, map[string]int64{"": 12}, m["paygate.outbox.depth"])
	require.Equal(t, map[string]int64{"": 1}, m["paygate.outbox.dead"])
	require.Equal(t, map[string]int64{"": 61}, m["paygate.outbox.oldest_age"])
}

// webhookTxs are two valid zakat transactions.
func webhookTxs() []zakat.Transaction {
	at := time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("MYT", 8*3600))
	return []zakat.Transaction{
		{Agency: zakat.AgencyLZS, OrderNo: "ZK-55501", Amount: 12000, Name: "Aminah", Email: "aminah@example.com", Time: at,
			Status: zakat.StatusSuccess, Data: zakat.Data{Type: zakat.ZakatPendapatan, State: zakat.Selangor, Year: "2026"}},
		{Agency: zakat.AgencyPPZ, OrderNo: "ZK-55502", Amount: 2800, Name: "Farid", Email: "farid@example.com", Time: at,
			Status: zakat.StatusSuccess, Data: zakat.Data{Type: zakat.Fitrah, State: zakat.KualaLumpur, Rate: "7.00", Dependants: "4"}},
	}
}

// Nothing recorded carries a reference, an order number, an amount, an
// e-mail, a name or a credential of the flows above.
func TestNoAttributeCarriesASecret(t *testing.T) {
	s := newShop(t, gatewaytest.WithDuplicateCallbacks(2, false))
	ctx := context.Background()
	s.checkout(t, "INV-9001", "cart-42", 14990)
	today := time.Now().In(time.FixedZone("MYT", 8*3600))
	for _, err := range s.client.Payments(ctx, paygate.ReportQuery{Start: today, End: today}) {
		require.NoError(t, err)
	}
	_, err := s.handler.Reconcile(ctx, s.client, []string{"INV-9001~cart-42"})
	require.NoError(t, err)
	forged, err := gatewaytest.NewCallbackRequest(s.sb.Key(), s.server.URL+"/paygate/return", url.Values{
		"status": {"success"}, "refNo": {"INV-9001"}, "orderNo": {"GW-FORGED-77"}, "amount": {"149.90"}})
	require.NoError(t, err)
	require.NoError(t, forged.ParseForm())
	forgedSig := forged.PostForm.Get("signature")
	form := forged.PostForm
	form.Set("amount", "1.00") // tampered: the signature no longer verifies
	resp, err := http.PostForm(s.server.URL+"/paygate/return", form)
	require.NoError(t, err)
	resp.Body.Close()
	sender, err := s.sb.WebhookSender(paygate.WithObserver(s.tm.obs))
	require.NoError(t, err)
	_, err = sender.Send(ctx, webhookTxs())
	require.NoError(t, err)

	secrets := []string{"INV-9001", "cart-42", "149.90", "14990", "1.00", "GW-FORGED-77", "siti@example.com",
		s.sb.APIKey, s.sb.AuthToken, s.sb.WebhookPassword, s.sb.Agency, forgedSig,
		"ZK-55501", "ZK-55502", "120.00", "28.00", "Aminah", "Farid", "aminah@example.com", "farid@example.com"}
	for _, o := range s.sb.Orders() {
		secrets = append(secrets, o.OrderNo)
	}
	s.sigs.mu.Lock()
	for _, sig := range s.sigs.seen {
		if sig != "" {
			secrets = append(secrets, sig)
		}
	}
	s.sigs.mu.Unlock()
	require.GreaterOrEqual(t, len(secrets), 22, "the sandbox's order number and the order's signature are among them")
	values := s.tm.attributeValues(t)
	require.Greater(t, len(values), 50)
	require.Empty(t, leaks(values, secrets), "recorded values that hold a secret")
	require.Equal(t, []string{"paygate.x=inv-9001/1"}, leaks([]string{"paygate.x=inv-9001/1"}, secrets), "the scan finds one, in any case")
}

// leaks lists the values that hold one of secrets, in any case.
func leaks(values, secrets []string) []string {
	var out []string
	for _, v := range values {
		for _, secret := range secrets {
			if strings.Contains(strings.ToLower(v), strings.ToLower(secret)) {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// readAll reads a body whole, for the signature recorder.
func readAll(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}
