package guides

// The merchant's fleet: exactly once on PostgreSQL (pgstore).

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/pgstore"
)

// fleetHandler is the README's second integration: every replica serves
// the callbacks, and the order's update and the record of the callback
// commit together.
func fleetHandler(ctx context.Context, db *sql.DB) (http.Handler, error) {
	// code: readme-callbacks
	key, err := paygate.KeyFromEnv() // PAYGATE_API_KEY: the gateway signs callbacks with it
	if err != nil {
		return nil, err
	}
	dedupe, err := pgstore.New(db) // one table shared by every replica (db: pgx's database/sql driver)
	if err != nil {
		return nil, err
	}
	if err := dedupe.Migrate(ctx); err != nil { // every replica may run it at start-up
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/paygate/return", &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		// Exactly once: the order's update and the record that this callback
		// was handled commit in one transaction, whatever crashes, retries,
		// duplicates or replicas. No unique constraint or "already paid" check.
		Fulfil: dedupe.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
			_, err := tx.ExecContext(ctx, `UPDATE orders SET paid_sen = paid_sen + $2 WHERE ref_no = $1`,
				cb.RefNo, int64(cb.Amount))
			return err // an error or a panic: rolled back, 500, the gateway retries
		}),
		OnReturn: func(w http.ResponseWriter, r *http.Request, _ *paygate.Callback) {
			http.Redirect(w, r, "/account/orders", http.StatusSeeOther) // unsigned: show nothing
		},
	})
	// end: readme-callbacks
	return mux, nil
}

// fleetHandlerPgx is the fleet's handler for a merchant on pgx: FulfilPgx
// on a Deduper of the merchant's pool.
func fleetHandlerPgx(ctx context.Context, pool *pgxpool.Pool, key paygate.Key) (http.Handler, error) {
	// code: fulfil-pgx
	dedupe, err := pgstore.NewPgx(pool) // pool: your *pgxpool.Pool
	if err != nil {
		return nil, err
	}
	if err := dedupe.Migrate(ctx); err != nil {
		return nil, err
	}
	handler := &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		Fulfil: dedupe.FulfilPgx(func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error {
			_, err := tx.Exec(ctx, `UPDATE orders SET paid_sen = paid_sen + $2 WHERE ref_no = $1`,
				cb.RefNo, int64(cb.Amount))
			return err
		}),
	}
	// end: fulfil-pgx
	return handler, nil
}

// fleetDB opens PAYGATE_TEST_POSTGRES_DSN on a fresh schema (dropped
// afterwards), so that the guide's code can use the default table names.
// Without a DSN it skips, as the pgstore tests do.
func fleetDB(t *testing.T) *sql.DB { return fleetDBOn(t, fleetDSN(t)) }

// fleetDBOn opens dsn with the orders table made.
func fleetDBOn(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	_, err = db.Exec(`CREATE TABLE orders (ref_no text PRIMARY KEY, paid_sen bigint NOT NULL DEFAULT 0)`)
	require.NoError(t, err)
	return db
}

// fleetDSN is PAYGATE_TEST_POSTGRES_DSN on a fresh schema, dropped
// afterwards.
func fleetDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("PAYGATE_TEST_POSTGRES_DSN is not set: the fleet's code needs PostgreSQL")
	}
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	schema := fmt.Sprintf("paygate_guides_%d", rand.Uint32())
	_, err = admin.Exec(`CREATE SCHEMA ` + schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Two replicas of the fleet's handler, the same callback to both, many
// times: the order is paid once.
func TestFleetHandler(t *testing.T) {
	db := fleetDB(t)
	sb := sandboxEnv(t, gatewaytest.WithRetryInterval(10*time.Millisecond))
	ctx := context.Background()
	var replicas []*httptest.Server
	for range 2 {
		h, err := fleetHandler(ctx, db)
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		replicas = append(replicas, srv)
	}
	_, err := db.Exec(`INSERT INTO orders (ref_no) VALUES ('INV-1')`)
	require.NoError(t, err)
	client, err := newClient()
	require.NoError(t, err)
	_, err = client.CreateOrder(ctx, paygate.Order{RefNo: "INV-1", Amount: 1000,
		Email: "a@example.com", ReturnURL: replicas[0].URL + "/paygate/return"})
	require.NoError(t, err)
	require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess))
	sb.Settle()
	for i := range 6 {
		req, err := gatewaytest.NewCallbackRequest(sb.Key(), replicas[i%2].URL+"/paygate/return", url.Values{
			"refNo": {"INV-1"}, "orderNo": {sb.Orders()[0].OrderNo}, "status": {"success"}, "amount": {"10.00"}})
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	var paid int64
	require.NoError(t, db.QueryRow(`SELECT paid_sen FROM orders WHERE ref_no = 'INV-1'`).Scan(&paid))
	require.Equal(t, int64(1000), paid)
}

// Two replicas of the pgx fleet's handler, each on a pool of its own (as
// two processes would be), the same callback to both, many times: the
// order is paid once.
func TestFleetHandlerPgx(t *testing.T) {
	dsn := fleetDSN(t)
	db := fleetDBOn(t, dsn)
	ctx := context.Background()
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	var replicas []http.Handler
	for range 2 {
		pool, err := pgxpool.New(ctx, dsn)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		h, err := fleetHandlerPgx(ctx, pool, key)
		require.NoError(t, err)
		replicas = append(replicas, h)
	}
	_, err = db.Exec(`INSERT INTO orders (ref_no) VALUES ('INV-1')`)
	require.NoError(t, err)
	for i := range 6 {
		req, err := gatewaytest.NewCallbackRequest(key, "/paygate/return", url.Values{
			"refNo": {"INV-1"}, "orderNo": {"GW-1"}, "status": {"success"}, "amount": {"10.00"}})
		require.NoError(t, err)
		w := httptest.NewRecorder()
		replicas[i%2].ServeHTTP(w, req)
		require.Equal(t, http.StatusOK, w.Code)
	}
	var paid int64
	require.NoError(t, db.QueryRow(`SELECT paid_sen FROM orders WHERE ref_no = 'INV-1'`).Scan(&paid))
	require.Equal(t, int64(1000), paid)
}
