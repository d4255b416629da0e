package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
	"github.com/paygate-go/paygate/zakat/outbox"
)

// outboxBench is a migrated outbox on a fresh table of the test
// database, sending to an in-process sandbox, dropped after.
type outboxBench struct {
	o      *outbox.Outbox
	db     *sql.DB
	table  string
	srv    *gatewaytest.Server
	sender *paygate.WebhookSender
}

func newOutboxBench(b *testing.B, name string, sandbox []gatewaytest.Option, opts ...outbox.Option) *outboxBench {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("PAYGATE_TEST_POSTGRES_DSN is not set")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	b.Cleanup(func() { db.Close() })
	srv := gatewaytest.NewServer(sandbox...)
	b.Cleanup(srv.Close)
	sender, err := srv.WebhookSender()
	if err != nil {
		b.Fatal(err)
	}
	table := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	o, err := outbox.New(db, sender, append([]outbox.Option{outbox.WithTable(table)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	return &outboxBench{o: o, db: db, table: table, srv: srv, sender: sender}
}

// zakatTx is a valid transaction with orderno no.
func zakatTx(no string) zakat.Transaction {
	return zakat.Transaction{Agency: zakat.AgencyLZS, OrderNo: no, Amount: 1050, Name: "Ahmad bin Ali", Email: "ahmad@example.com",
		Time: time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("", 8*3600)), Status: zakat.StatusSuccess,
		Data: zakat.Data{Email: "ahmad@example.com", Name: "Ahmad bin Ali", ICNo: "900101145678", State: zakat.Selangor,
			Type: zakat.ZakatFitrah, Year: "2026", Phone: "0123456789", Address: "1 Jalan Satu", Postcode: "40000",
			City: "Shah Alam", Amount: "10.50", Rate: "2.625", Dependants: "4"}}
}

// seq numbers ordernos across a benchmark's calls.
var seq atomic.Int64

// freshTxs is n transactions never enqueued before.
func freshTxs(prefix string, n int) []zakat.Transaction {
	txs := make([]zakat.Transaction, n)
	for i := range txs {
		txs[i] = zakatTx(fmt.Sprintf("%s-%d", prefix, seq.Add(1)))
	}
	return txs
}

// Enqueue in the bank's transaction against the bank's own insert of the
// same rows, in the same kind of transaction, into a table of the
// transaction's columns (orderno the primary key, data as jsonb): one
// INSERT ... VALUES for 1 row, one INSERT ... SELECT FROM unnest for
// 10,000. x/bank_insert is time(enqueue) / time(bank's insert).
func BenchmarkOutboxEnqueue(b *testing.B) {
	ctx := context.Background()
	ob := newOutboxBench(b, "bench_outbox_enqueue", nil)
	bank := ob.table + "_bank"
	if _, err := ob.db.Exec(`CREATE TABLE ` + bank + ` (orderno text PRIMARY KEY, agency text NOT NULL, amount bigint NOT NULL,
	name text NOT NULL, email text NOT NULL, paid_at timestamptz NOT NULL, status text NOT NULL, data jsonb NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = ob.db.Exec("DROP TABLE IF EXISTS " + bank) })
	one := `INSERT INTO ` + bank + ` VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	many := `INSERT INTO ` + bank + ` SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::jsonb[])`
	inTx := func(fn func(tx *sql.Tx) error) {
		tx, err := ob.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := fn(tx); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{1, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			batch := 20
			if n > 1 {
				batch = 1
			}
			interleave(b, batch, side{"enqueue", func() {
				txs := freshTxs("E", n)
				inTx(func(tx *sql.Tx) error { return ob.o.Enqueue(ctx, tx, txs...) })
			}}, side{"bank_insert", func() {
				txs := freshTxs("B", n)
				inTx(func(tx *sql.Tx) error { return bankInsert(ctx, tx, one, many, txs) })
			}})
		})
	}
}

// bankInsert is the bank's own insert of txs: their columns, data as
// JSON.
func bankInsert(ctx context.Context, tx *sql.Tx, one, many string, txs []zakat.Transaction) error {
	n := len(txs)
	nos, agencies, names, emails, statuses, data := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	amounts, times := make([]int64, n), make([]time.Time, n)
	for i, t := range txs {
		d, err := json.Marshal(t.Data)
		if err != nil {
			return err
		}
		nos[i], agencies[i], amounts[i], names[i], emails[i], times[i], statuses[i], data[i] = t.OrderNo, string(t.Agency), int64(t.Amount), t.Name, t.Email, t.Time, string(t.Status), string(d)
	}
	if n == 1 {
		_, err := tx.ExecContext(ctx, one, nos[0], agencies[0], amounts[0], names[0], emails[0], times[0], statuses[0], data[0])
		return err
	}
	_, err := tx.ExecContext(ctx, many, nos, agencies, amounts, names, emails, times, statuses, data)
	return err
}

// The relay's rate against a bare Send of the same number of
// transactions to the same sandbox over loopback, answering at once
// (latency=0), after 5 ms (a service on the same network) or after 50 ms
// (a service across the country): each round enqueues 2,000
// transactions (not timed, then ANALYZE as autovacuum would on a table
// in use), times the relay until nothing is due with Run's
// DefaultWorkers rounds at once, then times one Send of 2,000 others. rate-x/send is the relay's rate / Send's (time(Send) /
// time(relay)).
func BenchmarkOutboxRelay(b *testing.B) {
	for _, latency := range []time.Duration{0, 5 * time.Millisecond, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%v", latency), func(b *testing.B) {
			ob := newOutboxBench(b, "bench_outbox_relay", []gatewaytest.Option{gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{Latency: latency})})
			relayRate(b, ob)
		})
	}
}

// relayRate is BenchmarkOutboxRelay on ob.
func relayRate(b *testing.B, ob *outboxBench) {
	ctx := context.Background()
	const n = 2000
	var relayTook, sendTook time.Duration
	for range b.N {
		tx, err := ob.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := ob.o.Enqueue(ctx, tx, freshTxs("R", n)...); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		if _, err := ob.db.Exec("ANALYZE " + ob.table); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range outbox.DefaultWorkers { // as Run's workers do, without its idle poll
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					k, err := ob.o.RelayOnce(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if k == 0 {
						return
					}
				}
			}()
		}
		wg.Wait()
		relayTook += time.Since(start)
		txs := freshTxs("S", n)
		start = time.Now()
		if _, err := ob.sender.Send(ctx, txs); err != nil {
			b.Fatal(err)
		}
		sendTook += time.Since(start)
	}
	if s, err := ob.o.Stats(ctx); err != nil || s.Depth != 0 || s.Dead != 0 {
		b.Fatal(s, err)
	}
	b.ReportMetric(float64(relayTook)/float64(b.N*n), "ns/tx-relay")
	b.ReportMetric(float64(sendTook)/float64(b.N*n), "ns/tx-send")
	b.ReportMetric(float64(sendTook)/float64(relayTook), "rate-x/send")
}
