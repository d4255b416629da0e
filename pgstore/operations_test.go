package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/paygate-go/paygate/zakat/outbox"
	"github.com/stretchr/testify/require"
)

// opsBlock is a fenced block of docs/operations.md: its language and text.
var opsBlock = regexp.MustCompile("(?ms)^```(sql|ini)\n(.*?)^```$")

// Every SQL block of docs/operations.md runs, as written, against the
// tables Migrate makes under their default names (in a schema of the
// test's own, first on the search_path), and every setting its ini blocks
// name is one PostgreSQL has, so that what an operator copies works.
func TestOperationsGuideRuns(t *testing.T) {
	raw, err := os.ReadFile("../docs/operations.md")
	require.NoError(t, err)
	blocks := opsBlock.FindAllStringSubmatch(string(raw), -1)
	require.NotEmpty(t, blocks)
	db := openDB(t, testDSN(t))
	db.SetMaxOpenConns(1) // one session: the search_path holds
	schema := fmt.Sprintf("paygate_ops_%d", rand.Uint32())
	_, err = db.Exec("CREATE SCHEMA " + schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE") })
	_, err = db.Exec("SET search_path = " + schema + ", public")
	require.NoError(t, err)
	ctx := context.Background()
	d, err := New(db)
	require.NoError(t, err)
	require.NoError(t, d.Migrate(ctx))
	w, err := NewWatchStore(db, "")
	require.NoError(t, err)
	require.NoError(t, w.Migrate(ctx))
	box, err := outbox.New(db, nil)
	require.NoError(t, err)
	require.NoError(t, box.Migrate(ctx))
	for i, b := range blocks {
		switch b[1] {
		case "sql":
			rows, err := db.Query(b[2])
			require.NoError(t, err, "block %d:\n%s", i, b[2])
			for rows.Next() {
			}
			require.NoError(t, rows.Err(), "block %d:\n%s", i, b[2])
			rows.Close()
		case "ini":
			for _, l := range strings.Split(strings.TrimSpace(b[2]), "\n") {
				name, _, ok := strings.Cut(strings.SplitN(l, "#", 2)[0], "=")
				if !ok {
					continue
				}
				var n int
				require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_settings WHERE name = $1`, strings.TrimSpace(name)).Scan(&n))
				require.Equal(t, 1, n, "block %d: no setting %q", i, name)
			}
		}
	}
}
