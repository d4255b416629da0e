// Command quickstart walks the five payment stages of docs/protocol.md "Payment flow" against the
// embedded sandbox (gatewaytest): no account, no network beyond loopback.
// Run it with `go run ./examples/quickstart`; it exits 0 when every stage
// behaved as docs/protocol.md says.
package main
