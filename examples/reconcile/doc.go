// Command reconcile writes the payment report for a date range as CSV, the
// merchant's side of reconciliation (docs/protocol.md "Payment flow", stage 5).
//
//	go run ./examples/reconcile -sandbox                      # demo orders in the embedded sandbox
//	go run ./examples/reconcile -from 2026-11-01 -to 2026-11-21  # PAYGATE_* configuration
package main
