// Command fleet is one replica of a shop that runs several, on one
// PostgreSQL: every replica serves the gateway's callbacks with the
// transactional path of pgstore (the order's update and the record of the
// callback commit together: exactly once, whatever crashes), and runs the
// pending watch on a shared store, so a paid order whose callback never
// came is looked up and fulfilled once, with no cron and nothing to
// remember. Orders nobody paid are given up after the watch's maximum age
// and written to a review table.
//
// Run two (or more) replicas behind any load balancer:
//
//	export DATABASE_URL=postgres://shop@127.0.0.1/shop PAYGATE_...=...   # paygate sandbox prints them
//	go run ./examples/fleet -addr 127.0.0.1:8081 -public http://127.0.0.1:8080 &
//	go run ./examples/fleet -addr 127.0.0.1:8082 -public http://127.0.0.1:8080 &
//	curl -d ref=INV-1 -d amount=1000 http://127.0.0.1:8081/orders
//
// Its test (main_test.go) runs three replica processes against the
// sandbox, losing, duplicating and delaying callbacks, and kills one.
package main
