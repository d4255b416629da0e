package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/observe"
	"github.com/paygate-go/paygate/zakat"
)

// DefaultTable is the table name unless WithTable says otherwise.
const DefaultTable = "paygate_outbox"

// The defaults of the options.
const (
	// DefaultLease is how long a relay holds the rows it took: a relay
	// killed mid-send leaves them to another after at most this long.
	DefaultLease = 2 * time.Minute
	// DefaultBatchSize is how many rows one relay round takes.
	DefaultBatchSize = 500
	// DefaultMaxAge is how long a transaction is retried (unconfirmed or
	// not sent) before it is dead.
	DefaultMaxAge = 7 * 24 * time.Hour
	// DefaultRetention is how long a done row is kept, so that the same
	// transaction enqueued again is still one: 400 days
	// (paygate.DefaultRetention, pgstore's).
	DefaultRetention = paygate.DefaultRetention
	// DefaultWorkers is how many rounds Run runs at once, so that one
	// round's database work overlaps another's send.
	DefaultWorkers = 2
	// DefaultPollInterval is how long an idle relay waits before it looks
	// for due rows again.
	DefaultPollInterval = time.Second
	// DefaultFirstBackoff and DefaultMaxBackoff bound the wait before a
	// retry: the first after about DefaultFirstBackoff, doubling to
	// DefaultMaxBackoff, each with jitter.
	DefaultFirstBackoff = 5 * time.Second
	DefaultMaxBackoff   = time.Hour
)

// Outbox is the bank's durable outbox on one PostgreSQL table: Enqueue in
// the bank's transaction, Run on every replica, the operator's methods
// (Stats, Dead, Retry, Drop). Safe for concurrent use.
type Outbox struct {
	db     *sql.DB
	sender *paygate.WebhookSender
	rules  zakat.Validator
	table  string

	lease, maxAge, retention, poll, firstBackoff, maxBackoff time.Duration
	batchSize, workers                                       int
	logger                                                   *slog.Logger
	observer                                                 observe.Observer

	enqueueSQL, existingSQL, takeSQL, recordSQL, statsSQL string
}

// Option configures an Outbox.
type Option func(*Outbox) error

// tableName is what WithTable accepts: an identifier, optionally
// schema-qualified, in lower case, short enough for its index names.
var tableName = regexp.MustCompile(`^([a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]{0,55}$`)

// WithTable sets the table name (default paygate_outbox).
func WithTable(name string) Option {
	return func(o *Outbox) error {
		if !tableName.MatchString(name) {
			return fmt.Errorf("outbox: table name %q: want a lower-case identifier of at most 56 characters, optionally schema-qualified", name)
		}
		o.table = name
		return nil
	}
}

// positive is the check of a duration option.
func positive(name string, d time.Duration, dst *time.Duration) Option {
	return func(o *Outbox) error {
		if d <= 0 {
			return fmt.Errorf("outbox: %s %v: want a positive duration", name, d)
		}
		*(dst) = d
		return nil
	}
}

// WithLease sets how long a relay holds the rows it took (default
// DefaultLease). Each round's send is bounded by it, so another relay
// never takes a row still in flight; a killed relay's rows come back
// after it, to be resent.
func WithLease(d time.Duration) Option {
	return func(o *Outbox) error { return positive("lease", d, &o.lease)(o) }
}

// WithMaxAge sets how long after its enqueue (or an operator's Retry) a
// transaction that stays unconfirmed or not sent is retried before it is
// dead (default DefaultMaxAge, 7 days).
func WithMaxAge(d time.Duration) Option {
	return func(o *Outbox) error { return positive("maximum age", d, &o.maxAge)(o) }
}

// WithRetention sets how long a done row is kept (default
// DefaultRetention); within it the same transaction enqueued again is
// one transaction, not sent again.
func WithRetention(d time.Duration) Option {
	return func(o *Outbox) error { return positive("retention", d, &o.retention)(o) }
}

// WithPollInterval sets how long an idle relay waits before it looks for
// due rows again (default DefaultPollInterval).
func WithPollInterval(d time.Duration) Option {
	return func(o *Outbox) error { return positive("poll interval", d, &o.poll)(o) }
}

// WithBackoff sets the retry waits: about first after the first failed
// attempt, doubling up to most, each drawn between half and all of it
// (defaults DefaultFirstBackoff, DefaultMaxBackoff).
func WithBackoff(first, most time.Duration) Option {
	return func(o *Outbox) error {
		if first <= 0 || most < first {
			return fmt.Errorf("outbox: backoff %v to %v: want 0 < first <= most", first, most)
		}
		o.firstBackoff, o.maxBackoff = first, most
		return nil
	}
}

// WithBatchSize sets how many rows a relay round takes (default
// DefaultBatchSize; the sender cuts them into its own requests).
func WithBatchSize(n int) Option {
	return func(o *Outbox) error {
		if n < 1 {
			return fmt.Errorf("outbox: batch size %d: want at least 1", n)
		}
		o.batchSize = n
		return nil
	}
}

// WithWorkers sets how many rounds Run runs at once (default
// DefaultWorkers), each with its own batch.
func WithWorkers(n int) Option {
	return func(o *Outbox) error {
		if n < 1 {
			return fmt.Errorf("outbox: workers %d: want at least 1", n)
		}
		o.workers = n
		return nil
	}
}

// WithLogger sets where the relay logs what it cannot do (a database
// unreachable, a round's outcomes not recorded); default slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *Outbox) error {
		if l == nil {
			return errors.New("outbox: nil logger")
		}
		o.logger = l
		return nil
	}
}

// WithObserver makes the relay report each round's outcomes
// (observe.Observer.OutboxRound) and, at each poll of an idle relay, the
// table's depth, the age of its oldest row and its dead count
// (OutboxStats).
func WithObserver(obs observe.Observer) Option {
	return func(o *Outbox) error { o.observer = obs; return nil }
}

// NewPgx returns an Outbox on pool: New on stdlib.OpenDBFromPool(pool),
// for a bank whose code speaks pgx (EnqueuePgx takes its pgx.Tx). Call it
// once per pool (the *sql.DB it opens lives as long as the process).
func NewPgx(pool *pgxpool.Pool, sender *paygate.WebhookSender, opts ...Option) (*Outbox, error) {
	if pool == nil {
		return nil, errors.New("outbox: nil *pgxpool.Pool")
	}
	return New(stdlib.OpenDBFromPool(pool), sender, opts...)
}

// New returns an Outbox on db (opened with github.com/jackc/pgx/v5/stdlib)
// that sends with sender and checks transactions with its validator
// (paygate.WebhookSender.Validator). Call Migrate once to create its table.
// A nil sender gives an outbox for the operator's methods only: Enqueue,
// Run and RelayOnce then return ErrNoSender.
func New(db *sql.DB, sender *paygate.WebhookSender, opts ...Option) (*Outbox, error) {
	if db == nil {
		return nil, errors.New("outbox: nil *sql.DB")
	}
	o := &Outbox{db: db, sender: sender, table: DefaultTable,
		lease: DefaultLease, maxAge: DefaultMaxAge, retention: DefaultRetention, poll: DefaultPollInterval,
		firstBackoff: DefaultFirstBackoff, maxBackoff: DefaultMaxBackoff, batchSize: DefaultBatchSize, workers: DefaultWorkers, logger: slog.Default()}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("outbox: nil option")
		}
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if sender != nil {
		o.rules = sender.Validator()
	}
	o.prepareSQL()
	return o, nil
}

// ErrNoSender is the error of Enqueue, Run and RelayOnce on an outbox made
// without a sender.
var ErrNoSender = errors.New("outbox: no sender: this outbox was made with a nil *paygate.WebhookSender, for the operator's methods only")

// The states of a row (its state column).
const (
	stateQueued = "queued" // to be sent, at due_at
	stateDone   = "done"   // accepted by the service, kept for the retention
	stateDead   = "dead"   // refused, invalid or too old: an operator's
)

// Migrate creates the table and its indexes if they do not exist. Every
// replica may run it at start-up at once: it runs under an advisory lock
// named after the table.
//
// The table holds one row per orderno: the transaction's JSON without its
// status (body) and the status; its state (queued, done, dead); due_at
// (when a queued row is due, or when a done or dead row became so);
// whether an attempt may have reached the service (sent: its next send
// is a Resend; was_sent is its value before the last take); the attempts made, the relay's claim and the reason of
// the last failure.
func (o *Outbox) Migrate(ctx context.Context) error {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("outbox: migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	h := fnv.New64a()
	h.Write([]byte("paygate/outbox.Migrate " + o.table))
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(h.Sum64())); err != nil {
		return fmt.Errorf("outbox: migrate: lock: %w", err)
	}
	base := unqualified(o.table)
	for _, stmt := range []string{`CREATE TABLE IF NOT EXISTS ` + o.table + ` (
	orderno     text PRIMARY KEY,
	body        text NOT NULL,
	status      text NOT NULL,
	state       text NOT NULL DEFAULT 'queued',
	due_at      timestamptz NOT NULL DEFAULT now(),
	enqueued_at timestamptz NOT NULL DEFAULT now(),
	sent        boolean NOT NULL DEFAULT false,
	was_sent    boolean NOT NULL DEFAULT false,
	attempts    integer NOT NULL DEFAULT 0,
	claim       text,
	reason      text
)`,
		`CREATE INDEX IF NOT EXISTS ` + base + `_due ON ` + o.table + ` (due_at) WHERE state = 'queued'`,
		`CREATE INDEX IF NOT EXISTS ` + base + `_dead ON ` + o.table + ` (orderno) WHERE state = 'dead'`,
		`CREATE INDEX IF NOT EXISTS ` + base + `_done ON ` + o.table + ` (due_at) WHERE state = 'done'`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("outbox: migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("outbox: migrate: %w", err)
	}
	return nil
}

// unqualified is a table name without its schema.
func unqualified(table string) string {
	for i := len(table) - 1; i >= 0; i-- {
		if table[i] == '.' {
			return table[i+1:]
		}
	}
	return table
}

// us is a duration in microseconds, as the statements take intervals.
func us(d time.Duration) int64 { return d.Microseconds() }
