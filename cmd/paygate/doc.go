// Command paygate is the command-line tool of the paygate SDK.
//
// Usage:
//
//	paygate <command> [subcommand] [flags] [arguments]
//
// Commands:
//
//	sandbox                  run the in-process sandbox on 127.0.0.1 and print its credentials
//	                         (faults: -lose-every N, -duplicates N, -late-settlement D)
//	sandbox order create     create an order on a running sandbox (signed, as a merchant does)
//	sandbox order settle     decide or settle a sandbox order (the sandbox's admin route, loopback only)
//	sign                     sign a URL (GET) or a form (POST); -explain prints the message
//	verify                   verify a callback body; -explain prints the candidate messages
//	callback send            send a signed (or unsigned) test callback to a local URL
//	report                   the payment report for a date range, as CSV or JSON lines
//	                         (CSV: a cell that would run as a spreadsheet formula gets a
//	                         leading '; -csv-raw: values exactly as sent)
//	lookup REFNO             one order, for reconciliation
//	listen -forward-to URL   forward the merchant's payments (the payment report, polled every
//	                         -interval) to a handler of their own as signed callbacks, each
//	                         change once: retried at the next poll until the handler answers
//	                         2xx (-state FILE: across runs; -since DAY; -once: one poll)
//	replay REF -to URL       rebuild one order's signed callback from the lookup and post it;
//	                         a handler that has it answers a duplicate
//	reconcile REFNO...       dry run: each awaited order's gateway state and what a
//	                         reconciliation would do, fulfilling nothing (table or CSV,
//	                         formula cells made text as report does; -csv-raw;
//	                         with PAYGATE_DEDUPE_DSN it reads the merchant's pgstore
//	                         record, never writing it, to say already fulfilled)
//	ping                     check that the service answers (its echo and version) and show its clock offset, no credential sent
//	banks                    the FPX bank list as CSV (-b2b: the corporate channel)
//	probe                    check each documented assumption against the service, moving no
//	                         money, at most 2 requests a second; a report file per assumption
//	                         ID (holds, differs, cannot be checked); exit 1 when one differs
//	                         (-create: also unpaid orders at RM 1.00; -json; -o FILE)
//	webhook validate FILE... check webhook batch files against docs/protocol.md B1-B3
//	                         (-agencies or PAYGATE_WEBHOOK_AGENCIES: the agency codes;
//	                         -brand ADB: the real service's, ADBLZS, ADBPPZ and ADB)
//	webhook send FILE        send a batch's valid transactions with X-API-Password, list the
//	                         invalid ones (-all-or-nothing: send nothing then)
//	outbox status            the bank's outbox (PAYGATE_OUTBOX_DSN): queued, oldest age, dead
//	outbox dead              the dead transactions with their reasons (-limit N)
//	outbox retry ORDERNO...  make dead transactions due again after a fix (-all: every one)
//	outbox drop ORDERNO...   delete dead transactions, never to be sent
//	version                  print the SDK's version
//
// Configuration comes from flags and the PAYGATE_* variables (PAYGATE_AGENCY,
// PAYGATE_API_KEY, PAYGATE_AUTH_TOKEN, PAYGATE_CHECKOUT_URL,
// PAYGATE_REPORTS_URL, PAYGATE_PAY_URL, PAYGATE_WEBHOOK_URL, PAYGATE_WEBHOOK_PASSWORD,
// PAYGATE_WEBHOOK_AGENCIES, for reconcile PAYGATE_DEDUPE_DSN, for outbox PAYGATE_OUTBOX_DSN); the deprecated PAYGATE_TOKEN, PAYGATE_USERNAME
// and PAYGATE_PASSWORD are refused. Secrets are read from the environment, never from flags (which
// other users can see in the process list).
//
// # Forwarding payments to a local handler
//
// paygate listen and paygate replay let a developer run their real
// callback handler against real payments, signed with PAYGATE_API_KEY as
// the gateway signs its direct callback (docs/protocol.md A2):
//
//	paygate listen -forward-to http://localhost:8080/paygate/callback -state listen.json
//	paygate replay INV-1001~cart -to http://localhost:8080/paygate/callback
//
// listen reads the payment report, from -since (a Malaysian day; default:
// the changes after its first poll) to today, and forwards each order that
// is new or changed status since it last forwarded it. A change counts as
// forwarded only once the handler answers 2xx; otherwise (any other answer,
// a redirect, which is never followed, no answer within -timeout) it is
// tried again at the next poll. -state FILE keeps what was forwarded across
// runs; without it, the changes left undelivered when listen stops are named,
// for paygate replay. A callback is rebuilt from the record only: fields the
// record does not carry (addCharge, the fpx detail beyond
// fpx_debit_auth_code) are left out, orders not yet paid are not forwarded,
// and a record CallbackHandler.Reconcile would hold back is reported, never
// forwarded. replay takes the reference the order was created with
// (refNo~extraData when it had extra data). Neither prints a key, token or
// signature.
//
// Exit status: 0 success; 1 the operation failed (invalid input, a signature
// that does not verify, an answer other than 2xx); 2 usage, configuration or
// I/O error. Every command accepts -h.
package main
