// Package bench holds paygate's peer benchmarks: each figure of BENCHMARKS.md
// measured against its floor (a reused HMAC, a bare net/http handler) or its
// peer (sonic, goccy/go-json, encoding/json, a JSON Schema validator, a
// hand-written pgx statement), the two alternating in one run so that a
// shared machine's drift falls on both alike.
//
// It is a module of its own so that none of the peers enters the SDK's
// go.mod. run.sh runs every benchmark and prints the ratio table.
package bench
