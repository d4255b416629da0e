#!/usr/bin/env bash
# What Purge and the vacuum after it cost on a pgstore table of ROWS
# completed events (docs/operations.md): the table made as Migrate makes
# it (columns, primary key, the expiry index Purge walks, autovacuum
# settings), filled with ROWS done
# rows whose expiries are spread evenly over 400 days, one day's worth of
# them already past; then Purge's statement (a day's rows deleted), Purge
# again (nothing to delete), VACUUM (what autovacuum runs after it), and
# the bytes a row before and after. The table is dropped at the end.
#
#   PAYGATE_TEST_POSTGRES_DSN=postgres://... ROWS=1000000 bench/purge_vacuum.sh
#
# Run it on a server nothing else uses: the timings are wall-clock.
set -euo pipefail
: "${PAYGATE_TEST_POSTGRES_DSN:?set PAYGATE_TEST_POSTGRES_DSN}"
ROWS=${ROWS:-1000000}
t=bench_purge_${ROWS}
psql "$PAYGATE_TEST_POSTGRES_DSN" -v ON_ERROR_STOP=1 -X -q <<SQL
\timing off
DROP TABLE IF EXISTS $t;
CREATE TABLE $t (
	key        text PRIMARY KEY,
	token      text,
	done       boolean NOT NULL DEFAULT false,
	result     text,
	expires_at timestamptz NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.002, autovacuum_vacuum_threshold = 1000);
-- Keys of a refNo's length ("fulfil|" and 15 characters) in a random
-- order, inserted day by day as payments arrive: a day's rows sit
-- together in the heap, expiries one day apart in 400 groups.
INSERT INTO $t (key, token, done, result, expires_at)
SELECT 'fulfil|INV-' || lpad(to_hex((i * 2654435761::bigint) % 4294967296), 11, '0'), NULL, true, 'GW' || i,
       now() - interval '1 hour' + ((i - 1)::bigint * 400 / $ROWS) * interval '1 day'
FROM generate_series(1, $ROWS) AS i;
CREATE INDEX ${t}_purge ON $t (expires_at);
VACUUM ANALYZE $t;
\echo rows, bytes a row (heap, indexes) as built:
SELECT count(*) AS rows, pg_total_relation_size('$t') / count(*) AS bytes_a_row,
       pg_relation_size('$t') / count(*) AS heap, pg_indexes_size('$t') / count(*) AS index
FROM $t;
CHECKPOINT;
\timing on
-- Purge's statements, as pgstore runs them (without its pauses): at
-- most 10,000 rows each by ctid, walking the expiry index, no bitmap scan.
CREATE FUNCTION pg_temp.purge() RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE n bigint; total bigint := 0;
BEGIN
	SET LOCAL enable_bitmapscan = off;
	LOOP
		DELETE FROM $t AS d WHERE d.ctid = ANY(ARRAY(SELECT ctid FROM $t WHERE expires_at <= now() ORDER BY expires_at LIMIT 10000))
		AND (d.expires_at <= now()) IS TRUE;
		GET DIAGNOSTICS n = ROW_COUNT;
		total := total + n;
		EXIT WHEN n < 10000;
	END LOOP;
	RETURN total;
END \$\$;
\echo Purge (a day of rows):
SELECT pg_temp.purge() AS deleted;
\echo Purge again (nothing due):
SELECT pg_temp.purge() AS deleted;
\echo VACUUM after the purge:
VACUUM $t;
\timing off
SELECT n_live_tup, n_dead_tup FROM pg_stat_user_tables WHERE relid = '$t'::regclass;
\echo bytes a row after:
SELECT pg_total_relation_size('$t') / count(*) AS bytes_a_row FROM $t;
DROP TABLE $t;
SQL
