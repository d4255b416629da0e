#!/usr/bin/env bash
# Runs paygate's peer benchmarks (this module) and the SDK's own ratio
# benchmarks, COUNT times each (default 6), and prints the table of
# BENCHMARKS.md: every ratio and figure as min-max over the runs.
#
#   bench/run.sh                      # everything but PostgreSQL
#   PAYGATE_TEST_POSTGRES_DSN=... bench/run.sh
#   COUNT=3 bench/run.sh
#   HTTP_ROUNDS=20 bench/run.sh       # fewer rounds of 256 requests over HTTP (default 80)
#   FLEET_ROUNDS=20 bench/run.sh      # fewer rounds of 512 callbacks for CPU time (default 60)
#
# x/<peer> is time(paygate) / time(peer) per call, both measured in
# alternating batches in the same run; allocs/<side> is allocations per call.
set -euo pipefail
cd "$(dirname "$0")"
COUNT=${COUNT:-6}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

lscpu | grep -m1 'Model name' || true
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)   count: $COUNT"
(cd .. && go test -run '^$' -bench 'BenchmarkSigning' -benchtime 2000x -count "$COUNT" .) | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2 || true
# Small calls in many alternating rounds; whole batches and walks in a few.
go test -run '^$' -bench "^Benchmark(Sign|Handler|MemoryDeduper|PostgresDeduper)\$" -benchtime 100x -count "$COUNT" -timeout 60m . | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
go test -run '^$' -bench "^BenchmarkPayments\$" -benchtime 20x -count "$COUNT" . | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
# A payment through PostgreSQL (skipped without PAYGATE_TEST_POSTGRES_DSN).
go test -run '^$' -bench "^BenchmarkFulfilTx\$" -benchtime "${FULFIL_ROUNDS:-60}x" -count "$COUNT" . | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
# CPU per callback on each side (Linux, the server on this machine).
go test -run '^$' -bench "^BenchmarkFleetCPU\$" -benchtime "${FLEET_ROUNDS:-60}x" -count "$COUNT" . | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
# Over HTTP a round of 256 requests swings by about 10 % on a shared VM:
# more rounds, alternating, so that the ratio is of the two servers and
# not of the moments each ran.
go test -run '^$' -bench "^BenchmarkHandlerHTTP\$" -benchtime "${HTTP_ROUNDS:-80}x" -count "$COUNT" . | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
go test -run '^$' -bench "^BenchmarkValidate\$" -benchtime 1x -count "${VALIDATE_COUNT:-$COUNT}" -timeout 60m . | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2

echo
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	for (i = 3; i < NF; i += 2) {
		unit = $(i + 1)
		if (unit !~ /^(x\/|rate-x\/|req\/s|allocs\/|p99|B\/key|body-x|cpu-us:|cb\/s|tx\/s:)/ || unit == "allocs/op") continue
		k = name "\t" unit
		if (!(k in lo)) { order[++n] = k; lo[k] = $i; hi[k] = $i }
		if ($i + 0 < lo[k] + 0) lo[k] = $i
		if ($i + 0 > hi[k] + 0) hi[k] = $i
		runs[k]++
	}
}
END {
	printf "%-34s %-22s %-22s %s\n", "benchmark", "figure", "min-max", "runs"
	for (j = 1; j <= n; j++) {
		split(order[j], p, "\t")
		printf "%-34s %-22s %-22s %d\n", p[1], p[2], sprintf("%.3g-%.3g", lo[order[j]], hi[order[j]]), runs[order[j]]
	}
}' "$out"
