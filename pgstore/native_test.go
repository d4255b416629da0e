package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/dedupetest"
)

// driverConn is what pgx's database/sql connection offers database/sql,
// its native connection aside.
type driverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.NamedValueChecker
	driver.SessionResetter
}

// countingConn hides pgx's native connection from the Deduper (another
// driver, as far as it can tell) unless native is set, and counts the
// queries that go through database/sql.
type countingConn struct {
	driverConn
	queries *atomic.Int64
}

// QueryContext counts a query run through database/sql.
func (c countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.queries.Add(1)
	return c.driverConn.QueryContext(ctx, query, args)
}

// nativeConn is a countingConn that offers pgx's native connection.
type nativeConn struct{ countingConn }

// Conn is pgx's native connection.
func (c nativeConn) Conn() *pgx.Conn { return c.driverConn.(*stdlib.Conn).Conn() }

// countingConnector opens pgx connections wrapped as countingConn or
// nativeConn.
type countingConnector struct {
	driver.Connector
	native  bool
	queries *atomic.Int64
}

// Connect opens a wrapped connection.
func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	counted := countingConn{dc.(driverConn), c.queries}
	if c.native {
		return nativeConn{counted}, nil
	}
	return counted, nil
}

// openCountingDB opens the test database through countingConnector.
func openCountingDB(t testing.TB, native bool) (*sql.DB, *atomic.Int64) {
	t.Helper()
	connector, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(testDSN(t))
	require.NoError(t, err)
	queries := new(atomic.Int64)
	db := sql.OpenDB(countingConnector{Connector: connector, native: native, queries: queries})
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	t.Cleanup(func() { db.Close() })
	return db, queries
}

// Claim runs on pgx's native connection when the *sql.DB's driver offers
// it, and through database/sql otherwise; both keep the contract.
func TestClaimNativeOrDatabaseSQL(t *testing.T) {
	for _, tc := range []struct {
		name        string
		native      bool
		wantQueries func(t *testing.T, n int64)
	}{
		{name: "pgx", native: true, wantQueries: func(t *testing.T, n int64) {
			require.Zero(t, n, "a claim went through database/sql on a pgx connection")
		}},
		{name: "other driver", native: false, wantQueries: func(t *testing.T, n int64) {
			require.EqualValues(t, 3, n, "one query per claim")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dedupetest.Run(t, func(t *testing.T) paygate.Deduper {
				db, _ := openCountingDB(t, tc.native)
				d, _ := testDeduperOn(t, db)
				return d
			})
			ctx := context.Background()
			db, queries := openCountingDB(t, tc.native)
			d, _ := testDeduperOn(t, db)
			queries.Store(0)
			c, err := d.Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimAcquired, c.State)
			busy, err := d.Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimBusy, busy.State)
			require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
			done, err := d.Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, done)
			tc.wantQueries(t, queries.Load())
		})
	}
}

// faultConn fails the failAt-th operation of its connector (a BeginTx, a
// statement or a Commit, counted from 1; 0: none) with errInjected, in the
// client, without sending it: the transaction stays usable, so only the
// code under test can turn the failure into an error. The failRowsAt-th,
// a statement, runs, but its RowsAffected fails.
type faultConn struct {
	driverConn
	c *faultConnector
}

var errInjected = errors.New("injected fault")

func (c faultConn) step() error {
	_, err := c.stepN()
	return err
}

func (c faultConn) stepN() (int64, error) {
	n := c.c.ops.Add(1)
	if n == c.c.failAt.Load() {
		return n, errInjected
	}
	return n, nil
}

type faultResult struct{ driver.Result }

func (faultResult) RowsAffected() (int64, error) { return 0, errInjected }

func (c faultConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	tx, err := c.driverConn.BeginTx(ctx, opts)
	return faultTx{tx, c}, err
}

func (c faultConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	n, err := c.stepN()
	if err != nil {
		return nil, err
	}
	res, err := c.driverConn.ExecContext(ctx, query, args)
	if err == nil && n == c.c.failRowsAt.Load() {
		return faultResult{res}, nil
	}
	return res, err
}

func (c faultConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	n, err := c.stepN()
	if err != nil {
		return nil, err
	}
	rows, err := c.driverConn.QueryContext(ctx, query, args)
	switch {
	case err != nil:
	case n == c.c.badRowAt.Load():
		rows = faultRows{rows, false}
	case n == c.c.brokenRowsAt.Load():
		rows = faultRows{rows, true}
	}
	return rows, err
}

// faultRows breaks the rows of a query: its first row's values are all
// text (a scan into a time fails), or, broken, reading a row fails.
type faultRows struct {
	driver.Rows
	broken bool
}

func (r faultRows) Next(dest []driver.Value) error {
	if r.broken {
		return errInjected
	}
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i := range dest {
		dest[i] = "not a value of its column"
	}
	return nil
}

type faultTx struct {
	driver.Tx
	c faultConn
}

func (t faultTx) Commit() error {
	if err := t.c.step(); err != nil {
		_ = t.Tx.Rollback()
		return err
	}
	return t.Tx.Commit()
}

// faultConnector opens pgx connections wrapped as faultConn.
type faultConnector struct {
	driver.Connector
	ops, failAt, failRowsAt atomic.Int64
	// badRowAt and brokenRowsAt break the rows of that operation, a query
	// (faultRows).
	badRowAt, brokenRowsAt atomic.Int64
}

func (c *faultConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return faultConn{dc.(driverConn), c}, nil
}

// openFaultDB opens the test database, one connection, through a
// faultConnector.
func openFaultDB(t testing.TB) (*sql.DB, *faultConnector) {
	t.Helper()
	connector, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(testDSN(t))
	require.NoError(t, err)
	fc := &faultConnector{Connector: connector}
	db := sql.OpenDB(fc)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db, fc
}
