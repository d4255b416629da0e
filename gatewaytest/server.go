package gatewaytest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/paygate-go/paygate/internal/paths"
	"github.com/paygate-go/paygate/internal/signing"
	"github.com/paygate-go/paygate/zakat"

	"github.com/paygate-go/paygate"
)

// Server is a running sandbox. Its exported fields are the credentials and
// address to configure a client with; change the others only before use.
type Server struct {
	// URL is the base of every endpoint: checkout, reports and webhook,
	// and pay links unless WithPayHost.
	URL string
	// PayURL is the base of pay links and the QR image page: URL, or with
	// WithPayHost a host of their own.
	PayURL string
	// Agency is this sandbox's merchant agency; it and the credentials
	// below are fresh for every server.
	Agency string
	// APIKey is the agency's API key (a UUID) that signs orders and
	// callbacks.
	APIKey string
	// AuthToken is the Bearer token the reports accept.
	AuthToken string
	// WebhookPassword is the X-API-Password the webhook accepts.
	WebhookPassword string

	key      paygate.Key
	verifier []*signing.Key // the key, as the service checks signatures with it
	srv      *httptest.Server
	paySrv   *httptest.Server // WithPayHost's, else nil
	client   *http.Client
	cfg      config
	mu       sync.Mutex
	orders   []*Order          // in creation order
	byNo     map[string]*Order // by orderNo
	byRef    map[string]*Order // by refNo (the composed refNo~extra)
	log      []*Delivery
	webhook  map[string]zakat.Transaction
	received int      // webhook transactions received, repeats included
	requests int      // webhook requests received
	pending  inflight // deliveries and late settlements under way (Settle, Close)
	closed   chan struct{}
	closing  sync.Once                // Close's work, done once however often it is called
	settling map[string]chan struct{} // late settlements due, by orderNo; closed when completed (WithLateSettlement)
	inFlight map[string]*Order        // creates whose answer was lost, not yet stored, by refNo (WithLostCreateAnswers)
	lookups  []Lookup                 // every order lookup answered (Lookups)
}

// config holds the options.
type config struct {
	retryInterval         time.Duration
	maxAttempts           int
	now                   func() time.Time
	testClock             *TestClock // WithTestClock's, else nil: real time
	dupCallbacks          dupCallbacks
	faults                WebhookFaults
	duplicates            DuplicateAnswer
	duplicateBody         DuplicateBody
	refusal               WebhookRefusal
	statusChange          StatusChange
	addr                  string
	refNoForm             RefNoForm
	fpxShape              FPXShape
	postWithPath          bool
	maxItems              int
	unsignedOrders        bool
	rowShape              RowShape
	totalPages            TotalPages
	encoding              CallbackEncoding
	upperHex              bool
	refNoTildes           bool
	webhookPath           string
	webhookRules          zakat.Validator
	recovery              recovery
	payHost               bool
	refuseB2BUnderMinimum bool
	loseCreate            func(refNo string) CreateLoss
	repeatedRefNos        bool
	logger                *slog.Logger            // WithLog's, else nil: silent
	failLookup            func(refNo string) bool // WithLookupFailures'
}

// Option configures a Server.
type Option func(*config)

// WithRetryInterval sets the wait between direct-callback attempts (the
// service's is about 30 s; tests use milliseconds, or keep 30 s on a
// WithTestClock).
func WithRetryInterval(d time.Duration) Option { return func(c *config) { c.retryInterval = d } }

// WithMaxAttempts caps the direct-callback attempts per event (default 10):
// with the merchant down, the gateway gives up after n tries and the event
// stays undelivered (docs/assumptions.md A-reconcile; WithCallbackLoss is
// the callback never sent at all).
func WithMaxAttempts(n int) Option { return func(c *config) { c.maxAttempts = n } }

// WithClock sets the clock used to check exp and stamp orders; waits
// (retries, late settlements) stay in real time. WithTestClock drives both.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithAddr listens on addr (a loopback address such as 127.0.0.1:8085)
// instead of a free port, for the command-line sandbox.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// NewServer starts a sandbox on 127.0.0.1 with fresh credentials. Close it
// when done. It panics if it cannot listen, as httptest.NewServer does; use
// Start for an error instead.
func NewServer(opts ...Option) *Server {
	s, err := Start(opts...)
	if err != nil {
		panic(fmt.Sprintf("gatewaytest: %v", err))
	}
	return s
}

// Start is NewServer with an error instead of a panic (a busy WithAddr, an
// address that is not loopback, a nil Option, WithClock(nil) or a switch
// out of its range).
func Start(opts ...Option) (*Server, error) {
	cfg := config{retryInterval: 30 * time.Second, maxAttempts: 10, now: time.Now, webhookPath: paths.Webhook}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("a nil Option")
		}
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.faults.Rand == nil {
		cfg.faults.Rand = cryptoFloat
	}
	apiKey := newUUID()
	key, err := paygate.ParseKey(apiKey)
	if err != nil {
		return nil, fmt.Errorf("generated key: %w", err) // cannot happen: newUUID makes a valid UUID
	}
	verifier, err := signing.ParseKey(apiKey)
	if err != nil {
		return nil, fmt.Errorf("generated key: %w", err)
	}
	s := &Server{
		Agency:          "SANDBOX01",
		APIKey:          apiKey,
		AuthToken:       "sandbox." + randomHex(24),
		WebhookPassword: randomHex(16),
		key:             key,
		verifier:        []*signing.Key{verifier},
		cfg:             cfg,
		byNo:            map[string]*Order{},
		byRef:           map[string]*Order{},
		webhook:         map[string]zakat.Transaction{},
		closed:          make(chan struct{}),
		settling:        map[string]chan struct{}{},
		client:          &http.Client{Timeout: 10 * time.Second},
	}
	s.srv = httptest.NewUnstartedServer(s.routes())
	if cfg.addr != "" {
		host, _, err := net.SplitHostPort(cfg.addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("sandbox address %q: want a loopback IP and port", cfg.addr)
		}
		l, err := net.Listen("tcp", cfg.addr)
		if err != nil {
			return nil, err
		}
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	if cfg.testClock != nil {
		cfg.testClock.watch(&s.pending)
	}
	s.srv.Start()
	s.URL, s.PayURL = s.srv.URL, s.srv.URL
	s.startPayHost()
	return s, nil
}

// validate refuses options the sandbox cannot honour.
func (cfg *config) validate() error {
	if cfg.now == nil {
		return errors.New("WithClock or WithTestClock: a nil clock")
	}
	if d := cfg.dupCallbacks; d.set && d.n < 1 || d.n > maxDuplicateCallbacks {
		return fmt.Errorf("WithDuplicateCallbacks: n %d: want 1 to %d", d.n, maxDuplicateCallbacks)
	}
	if err := cfg.recovery.validate(); err != nil {
		return err
	}
	if err := cfg.validateWebhookReadings(); err != nil {
		return err
	}
	if !validWebhookPath(cfg.webhookPath) {
		return fmt.Errorf("webhook path %q: want a clean absolute path (no //, /./ or ..), other than /, with valid escapes, without query, fragment or pattern characters", cfg.webhookPath)
	}
	return nil
}

// Close stops the server and any callback retries in flight. Calling it
// again, or from several goroutines, waits for the same stop, as
// httptest.Server's Close may be called again.
func (s *Server) Close() {
	s.closing.Do(func() {
		close(s.closed)
		s.pending.Wait()
		if s.cfg.testClock != nil {
			s.cfg.testClock.unwatch(&s.pending)
		}
		s.srv.Close()
		if s.paySrv != nil {
			s.paySrv.Close()
		}
	})
}

// Client returns a paygate.Client configured for this sandbox with both
// credentials (and WithPayHost's host, WithPayURL); opts are applied
// after.
func (s *Server) Client(opts ...paygate.Option) (*paygate.Client, error) {
	own := []paygate.Option{
		paygate.WithAgency(s.Agency), paygate.WithKey(s.key), paygate.WithAuthToken(s.AuthToken),
		paygate.WithCheckoutURL(s.URL), paygate.WithReportsURL(s.URL),
	}
	if s.paySrv != nil {
		own = append(own, paygate.WithPayURL(s.PayURL))
	}
	return paygate.NewClient(append(own, opts...)...)
}

// WithPayHost serves pay links (/pay/...) and the QR image page (/qr2/)
// on a host of their own, Server.PayURL, and not on Server.URL, as the
// public PHP client builds them on another host than checkout
// (docs/assumptions.md A-paylink-host). A client without
// paygate.WithPayURL then builds links the sandbox does not serve (404);
// Server.Client sets it.
func WithPayHost() Option { return func(c *config) { c.payHost = true } }

// startPayHost starts WithPayHost's server of pay links, if asked.
func (s *Server) startPayHost() {
	if s.cfg.payHost {
		s.paySrv = httptest.NewServer(s.payRoutes(http.NewServeMux()))
		s.PayURL = s.paySrv.URL
	}
}

// payRoutes adds the pay link and QR image page to mux.
func (s *Server) payRoutes(mux *http.ServeMux) *http.ServeMux {
	mux.HandleFunc("GET "+paths.Pay+"{agency}/{category}/{refNo}/{amount}", s.payLink)
	mux.HandleFunc("GET "+paths.QR2, s.qrImage)
	return mux
}

// Key returns the parsed API key, for a merchant's CallbackHandler.
func (s *Server) Key() paygate.Key { return s.key }

// routes is the service's surface.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+paths.Checkout, s.createOrder)
	mux.HandleFunc("POST /{$}", s.createOrder) // the developer pages post orders to the host's root
	mux.HandleFunc("GET "+paths.Transactions, s.transactions)
	mux.HandleFunc("GET "+paths.Version, s.version)
	mux.HandleFunc("GET "+paths.Echo, s.echo)
	mux.HandleFunc("GET "+paths.BankList+"{channel}", s.bankList)
	mux.HandleFunc("GET "+hostedPagePath+"{orderNo}", s.hostedPage)
	mux.HandleFunc("POST "+hostedPagePath+"{orderNo}", s.hostedChoice)
	mux.HandleFunc("GET "+paths.PaymentReport, s.paymentReport)
	mux.HandleFunc("GET "+paths.FPXRequest, s.fpxRequest)
	mux.HandleFunc("POST "+paths.QR, s.qr)
	mux.HandleFunc("POST "+paths.DuitNowQR, s.qr)
	mux.HandleFunc("POST "+s.cfg.webhookPath, s.receiveWebhook)
	mux.HandleFunc("POST "+AdminSettlePath, s.adminSettle)
	if !s.cfg.payHost {
		s.payRoutes(mux)
	}
	return s.dated(mux)
}

// dated stamps every answer's Date header with the sandbox's clock
// (WithClock), as a service's answers carry its own clock: a client learns
// its offset from it (docs/assumptions.md A-clock-skew).
func (s *Server) dated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", s.cfg.now().UTC().Format(http.TimeFormat))
		h.ServeHTTP(w, r)
	})
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// jsonError answers {"status":"ERROR","error":msg}.
func jsonError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"status": "ERROR", "error": msg})
}

// equalSecret compares a presented credential in constant time.
func equalSecret(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// newUUID makes a random version-4 UUID.
func newUUID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randomHex is n random bytes in hex.
func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

// randomBytes reads n bytes from crypto/rand.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("gatewaytest: crypto/rand: %v", err)) // the system's random source failed
	}
	return b
}

// cryptoFloat is a uniform float in [0, 1).
func cryptoFloat() float64 {
	b := randomBytes(7)
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return float64(v>>3) / float64(1<<53)
}
