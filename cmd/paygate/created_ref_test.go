package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
	"github.com/paygate-go/paygate/watch"
)

// With PAYGATE_DEDUPE_DSN, lookup and reconcile take the base reference
// a callback carries: the pending watch's table knows the reference as
// created. Several forms of one base are refused with both named; a
// database without the watch's table leaves references as given.
func TestBaseReferenceResolvedThroughTheWatch(t *testing.T) {
	dsn, db, _, dedupeTable := recordTable(t)
	sb := useSandbox(t)
	client, err := sb.Client()
	require.NoError(t, err)
	for _, o := range []paygate.Order{{RefNo: "INV-5", ExtraData: "cart"}, {RefNo: "INV-6", ExtraData: "a"}, {RefNo: "INV-6", ExtraData: "b"}} {
		o.Amount, o.Email, o.ReturnURL = 2590, "a@example.com", "https://shop.example/return"
		_, err := client.CreateOrder(context.Background(), o)
		require.NoError(t, err)
	}
	require.NoError(t, sb.Pay("INV-5", paygate.StatusSuccess))
	table := fmt.Sprintf("paygate_watch_ref_%d", rand.Uint32())
	store, err := pgstore.NewWatchStore(db, table)
	require.NoError(t, err)
	require.NoError(t, store.Migrate(context.Background()))
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table + "_budget")
	})
	now := time.Now()
	for _, ref := range []string{"INV-5~cart", "INV-6~a", "INV-6~b"} {
		require.NoError(t, store.Add(context.Background(), watch.Order{RefNo: ref, Created: now, Next: now}))
	}

	code, _, errOut := runCLI(t, "", "lookup", "INV-5")
	require.Equal(t, exitInvalid, code, "without the DSN the base alone finds nothing")
	require.Contains(t, errOut, "not found")

	t.Setenv(envDedupeDSN, dsn)
	code, out, errOut := runCLI(t, "", "lookup", "-watch-table", table, "INV-5")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, `"seller_order_no": "INV-5~cart"`)
	require.Equal(t, map[string]string{"INV-5~cart": "fulfil"},
		verdicts(t, "-dedupe-table", dedupeTable, "-watch-table", table, "INV-5"))

	code, _, errOut = runCLI(t, "", "lookup", "-watch-table", table, "INV-6")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `2 awaited orders have the reference "INV-6" (INV-6~a, INV-6~b): pass the one to look up as created`)

	code, _, errOut = runCLI(t, "", "lookup", "-watch-table", table+"_none", "INV-5")
	require.Equal(t, exitInvalid, code, "no watch table: the reference as given")
	require.Contains(t, errOut, "not found")
}
