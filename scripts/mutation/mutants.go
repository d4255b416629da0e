//go:build unix

package main

// mutant is one deliberate defect: in file, the exact text old (which must
// occur exactly once) becomes new. issue marks the fifteen defects of the
// mutation check's first run (issue 20); pkgs are the packages whose tests
// must catch it.
type mutant struct {
	name  string
	issue bool
	file  string
	old   string
	new   string
	pkgs  []string
}

// soak names the tests the mutation runs skip (go test -skip): soak tests
// whose length is set by their design, not by a defect. The sqldedup crash
// test paces 50 process kills 200-500 ms apart (17 s at least) and bounds
// itself at 90 s; the contract and fault tests catch the same defects in
// seconds. The watch's fleet on the test clock (eight days of 300 orders,
// 4 to 15 s) is skipped for the same reason: the store contract catches
// its defects sooner.
const soak = "^(TestCrashFulfilTxAcrossProcesses|TestWatchFleetSettlesEveryOrderOnce)$"

// Package sets the mutants are tested with.
var (
	root    = []string{"."}
	sqlPkg  = []string{"./sqldedup"}
	jsonPkg = []string{"./internal/jsonscan"}
	// signingPkgs: the signing engine's own tests and the root's.
	signingPkgs = []string{"./internal/signing", "."}
	// memory is the in-memory deduper: its engine's tests and the root's
	// (the contract suite, the hostile model, the handler).
	memory = []string{".", "./internal/memstore"}
	// sandbox is gatewaytest, the sandbox merchants test against.
	sandbox = []string{"./gatewaytest"}
	// watchPkg is the pending watch and its in-memory store.
	watchPkg = []string{"./watch"}
)

// mutants is the table of defects, the fifteen of the issue first.
var mutants = []mutant{
	// The fifteen of issue 20.
	{"signature-length", true, "internal/signing/signing.go",
		"for i := range len(sig) / 2 {", "for i := range len(sig)/2 - 1 {", signingPkgs},
	{"verification-result", true, "internal/signing/verify.go",
		"return ErrSignatureMismatch\n}\n\n// callbackOrder", "return nil\n}\n\n// callbackOrder", signingPkgs},
	{"exp-ignored", true, "internal/signing/verify.go",
		"if now.Unix() > exp {", "if now.Unix() > exp && false {", signingPkgs},
	{"fulfil-pending", true, "callback_event.go",
		"if cb.Status != StatusSuccess {", "if cb.Status != StatusSuccess && cb.Status != StatusPending {", root},
	{"skip-complete", true, "callback_lease.go",
		"return c.ev.d.Complete(sctx, c.key, c.token, c.result)", "_ = sctx\n\treturn nil", root},
	{"steal-live-claim", true, "internal/memstore/memstore.go",
		"case at < r.deadline:\n\t\treturn Claim{Outcome: Busy}, nil", "case at < r.deadline && false:\n\t\treturn Claim{Outcome: Busy}, nil", memory},
	{"no-renewal", true, "callback_lease.go",
		"err := c.ev.d.Renew(ctx, c.key, c.token, c.lease)", "err := error(nil); _ = ctx", root},
	{"follow-redirects", true, "transport.go",
		"c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }", "c.CheckRedirect = nil", root},
	{"token-redaction", true, "secret.go",
		"func (secret) String() string { return redacted }", "func (s secret) String() string { return s.reveal() }", root},
	{"orderno-uniqueness", true, "ordernos.go",
		"if first, dup := seen.Add(orderNo, i); dup {", "if first, dup := seen.Add(orderNo, i); dup && false {", root},
	{"three-decimal-amount", true, "amount.go",
		"if len(frac) > 2 {", "if len(frac) > 3 {", root},
	{"5xx-rejected", true, "webhook_sender.go",
		"case apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500:", "case apiErr.StatusCode == http.StatusTooManyRequests:", root},
	{"repeated-page-guard", true, "paging.go",
		"if m, ok := pg.seen[d]; ok {", "if m, ok := pg.seen[d]; ok && false {", root},
	{"fitrah-product", true, "webhook_rules.go",
		"if !fitrahMatches(d.Rate, d.Dependants, tx.Amount) {", "if false && !fitrahMatches(d.Rate, d.Dependants, tx.Amount) {", root},
	{"body-limit", true, "callback_handler.go",
		"readCallbackBody(http.MaxBytesReader(w, r.Body, limit), ", "readCallbackBody(r.Body, ", root},

	// Redaction: every method of the two secret types.
	{"secret-format", false, "secret.go",
		"func (secret) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }", "func (s secret) Format(f fmt.State, _ rune) { io.WriteString(f, s.reveal()) }", root},
	{"secret-gostring", false, "secret.go",
		"func (secret) GoString() string { return redacted }", "func (s secret) GoString() string { return s.reveal() }", root},
	{"secret-logvalue", false, "secret.go",
		"func (secret) LogValue() slog.Value { return slog.StringValue(redacted) }", "func (s secret) LogValue() slog.Value { return slog.StringValue(s.reveal()) }", root},
	{"key-logvalue", false, "key.go",
		"func (Key) LogValue() slog.Value { return slog.StringValue(redacted) }", "func (k Key) LogValue() slog.Value { return slog.AnyValue(k.k) }", root},
	{"url-signature-redaction", false, "internal/scrub/url.go",
		`return []string{"signature", "token",`, `return []string{"token",`, []string{"./internal/scrub", "."}},

	// Signing and verification.
	{"half-signature-compared", false, "internal/signing/verify.go",
		"if hmac.Equal(got[:], want[:]) {", "if hmac.Equal(got[:8], want[:8]) {", signingPkgs},
	{"long-signature-accepted", false, "internal/signing/signing.go",
		"if len(text) != len(sig) {", "if len(text) < len(sig) {", signingPkgs},
	{"repeated-signature-accepted", false, "internal/signing/verify.go",
		"if len(sigs) > 1 || !ok {", "if !ok {", signingPkgs},
	{"exp-repeated-accepted", false, "internal/signing/verify.go",
		"if err != nil || len(form[FieldExp]) != 1 {", "if err != nil {", signingPkgs},
	{"callback-variants-never-tried", false, "internal/signing/verify.go",
		"variants, n := callbackVariants(s.buf)", "variants, n := [len(callbackOrder)]Encoding{}, 0", signingPkgs},
	{"callback-rfc3986-never-tried", false, "internal/signing/verify.go",
		"Encoding{FormPHP, FormWHATWG, RFC3986}", "Encoding{FormPHP, FormWHATWG}", signingPkgs},
	{"form-escapes-tilde", false, "internal/signing/encoding.go",
		`Form:       {"form", true, true, false},`, `Form:       {"form", true, false, false},`, signingPkgs},
	{"fields-unsorted", false, "internal/signing/message.go",
		"sorted := sortFields(dst, dst[start:])\n\treturn sorted[len(dst):], nil", "return dst[start:], nil", signingPkgs},
	{"callback-extra-field-dropped", false, "internal/signing/message.go",
		"if seen != len(form) {", "if seen > len(form) {", signingPkgs},
	{"callback-field-twice-first-taken", false, "internal/signing/message.go",
		"\t\tif len(v) != 1 {\n\t\t\treturn dst[:start], false", "\t\tif len(v) == 0 {\n\t\t\treturn dst[:start], false", signingPkgs},
	{"rank-ties-placed", false, "internal/signing/message.go",
		"if same != 1 {", "if same == 0 {", signingPkgs},
	{"escape-chunk-drops-byte", false, "internal/signing/encoding.go",
		"n += out.put(o, t[in[7]])", "n += o", signingPkgs},
	{"empty-key-values-merged", false, "internal/signing/message.go",
		"\tif several {\n", "\tif multi != \"\" {\n", signingPkgs},

	// The handler and the in-memory deduper.
	{"failed-release-not-retried", false, "callback_lease.go",
		"go c.retryRelease(detached(ctx), c.heldUntil)", "_ = c.heldUntil", root},
	{"double-payment-silent", false, "callback_event.go",
		"case paid == cb.OrderNo:", "case paid != \"\":", root},
	{"failed-hook-not-released", false, "callback_event.go",
		"c.release(ctx)\n\t\treturn notDone", "return notDone", root},
	{"memory-any-token", false, "internal/memstore/memstore.go",
		"if r == nil || r.token == \"\" || r.token != token {", "if r == nil || r.token == \"\" {", memory},
	{"memory-complete-not-done", false, "internal/memstore/memstore.go",
		"r.token = \"\"\n", "\n", memory},
	// The engine under MemoryDeduper (internal/memstore): its map, its
	// expiry heap and its bound.
	{"memory-completed-forgotten-early", false, "internal/memstore/memstore.go",
		"s.setDeadline(r, s.at(now.Add(retention)))", "s.setDeadline(r, s.at(now))", memory},
	{"memory-lapsed-claim-kept", false, "internal/memstore/memstore.go",
		"case at < r.deadline:\n\t\treturn Claim{Outcome: Busy}, nil", "case at < r.deadline || r.token != \"\":\n\t\treturn Claim{Outcome: Busy}, nil", memory},
	{"memory-expiry-drops-live-keys", false, "internal/memstore/memstore.go",
		"if len(s.expiry) == 0 || now < s.expiry[0].deadline {", "if len(s.expiry) == 0 {", memory},
	{"memory-token-reused", false, "internal/memstore/memstore.go",
		"s.seq++\n", "\n", memory},
	{"memory-released-key-kept", false, "internal/memstore/memstore.go",
		"delete(s.keys, r.key)", "_ = r.key", memory},
	{"memory-renewal-not-reordered", false, "internal/memstore/expiry.go",
		"s.expiry.fix(r.slot)", "_ = r.slot", memory},
	{"memory-heap-slot-stale", false, "internal/memstore/expiry.go",
		"h[i].slot, h[j].slot = i, j", "h[i].slot = i", memory},
	{"memory-limit-ignored", false, "internal/memstore/memstore.go",
		"if s.used >= s.limit {", "if s.used >= s.limit && false {", memory},
	// The replay bound (docs/assumptions.md A-replay-bound): a completed
	// key is never taken over, and is kept far longer than the handler's
	// 30 days.
	{"memory-done-taken-over", false, "internal/memstore/memstore.go",
		"case r.token == \"\":\n\t\treturn Claim{Outcome: Done", "case r.token == \"\" && at < r.deadline:\n\t\treturn Claim{Outcome: Done", memory},
	{"memory-done-kept-30-days", false, "dedupe.go",
		"\t\tretention = DefaultRetention\n", "\t\tretention = DefaultMaxTxnAge\n", memory},

	// sqldedup (needs PAYGATE_TEST_POSTGRES_DSN).
	{"fulfiltx-other-deduper-accepted", false, "sqldedup/fulfil_tx.go",
		"if !d.mayBe(claim.Deduper) {", "if false {", sqlPkg},
	{"hooktx-other-deduper-accepted", false, "sqldedup/hook_tx.go",
		"if !d.mayBe(claim.Deduper) {", "if false {", sqlPkg},
	{"fulfiltx-claim-unchecked", false, "sqldedup/fulfil_tx.go",
		"if n, err := res.RowsAffected(); err != nil || n != 1 {", "if n, err := res.RowsAffected(); err != nil || n > 1 {", sqlPkg},
	{"fulfiltx-claim-outside-tx", false, "sqldedup/fulfil_tx.go",
		"res, err := tx.ExecContext(ctx, d.txClaimSQL,", "res, err := d.db.ExecContext(ctx, d.txClaimSQL,", sqlPkg},
	{"fulfilpgx-claim-unchecked", false, "sqldedup/fulfil_pgx.go",
		"if claimed.RowsAffected() != 1 {", "if claimed.RowsAffected() > 1 {", sqlPkg},
	{"fulfilpgx-claim-outside-tx", false, "sqldedup/fulfil_pgx.go",
		"b.BeginTx(pgx.TxOptions{})\n\tb.Queue(d.txClaimSQL,", "b.Queue(\"select 1\")\n\tb.Queue(d.txClaimSQL,", sqlPkg},
	{"fulfilpgx-fn-ended-tx-unseen", false, "sqldedup/fulfil_pgx.go",
		"if c.PgConn().TxStatus() == 'I' {", "if false {", sqlPkg},
	{"fulfilpgx-commit-rollback-taken-for-done", false, "sqldedup/fulfil_pgx.go",
		"case errors.Is(err, pgx.ErrTxCommitRollback): // a statement of fn failed and fn returned nil\n\t\treturn paygate.ClaimResult{}, fmt.Errorf(",
		"case errors.Is(err, pgx.ErrTxCommitRollback): // a statement of fn failed and fn returned nil\n\t\treturn paygate.ClaimResult{State: paygate.ClaimAcquired}, nil\n\t\t_ = fmt.Errorf(", sqlPkg},
	{"fulfilpgx-left-in-transaction", false, "sqldedup/fulfil_pgx.go",
		"_ = tx.Rollback(ctx)", "_, _ = c.Exec(ctx, \"rollback\")", sqlPkg},
	{"fulfilpgx-other-deduper-accepted", false, "sqldedup/fulfil_pgx.go",
		"if !d.mayBe(claim.Deduper) {", "if false {", sqlPkg},
	{"hooktx-missing-row-called-lost", false, "sqldedup/hook_tx.go",
		"if errors.Is(err, sql.ErrNoRows) {\n\t\treturn d.otherDeduper(claim)", "if errors.Is(err, sql.ErrNoRows) && false {\n\t\treturn d.otherDeduper(claim)", sqlPkg},
	{"sql-lapsed-claim-kept", false, "sqldedup/sqldedup.go",
		"const lapsedRow = `NOT t.done AND t.expires_at <= now()`", "const lapsedRow = `NOT t.done AND t.expires_at <= now() - interval '1 day'`", sqlPkg},
	{"sql-done-within-a-day-busy", false, "sqldedup/sqldedup.go",
		"WHERE key = $1::text AND NOT (` + lapsedRow + `)\n), CASE", "WHERE key = $1::text AND t.expires_at > now() + interval '1 day'\n), CASE", sqlPkg},
	// The same two in the one-statement claim of a table Migrate has not
	// given its claim function.
	{"sql-fallback-lapsed-claim-kept", false, "sqldedup/sqldedup.go",
		"WHERE ` + lapsedRow + `\n\tRETURNING", "WHERE NOT t.done AND t.expires_at <= now() - interval '1 day'\n\tRETURNING", sqlPkg},
	{"sql-fallback-done-within-a-day-busy", false, "sqldedup/sqldedup.go",
		"WHERE key = $1::text AND NOT (` + lapsedRow + `)\n), claimed AS", "WHERE key = $1::text AND t.expires_at > now() + interval '1 day'\n), claimed AS", sqlPkg},
	// The replay bound: a done row is never taken over (both claims read
	// lapsedRow), and is kept far longer than the handler's 30 days.
	{"sql-done-taken-over", false, "sqldedup/sqldedup.go",
		"const lapsedRow = `NOT t.done AND t.expires_at <= now()`", "const lapsedRow = `t.expires_at <= now()`", sqlPkg},
	{"sql-done-kept-30-days", false, "sqldedup/sqldedup.go",
		"table: DefaultTable, retention: DefaultRetention}", "table: DefaultTable, retention: paygate.DefaultMaxTxnAge}", sqlPkg},
	// The handler's age bound on a replayed success.
	{"replay-age-unbounded", false, "callback_age.go",
		"if age <= limit && age >= -maxTxnAhead {", "if age <= limit || age >= -maxTxnAhead {", root},
	{"sql-complete-not-done", false, "sqldedup/sqldedup.go",
		"SET done = true, token = NULL", "SET done = false, token = NULL", sqlPkg},
	{"sql-release-any-token", false, "sqldedup/sqldedup.go",
		"` WHERE key = $1 AND token = $2 AND NOT done`", "` WHERE key = $1 AND (token = $2 OR true) AND NOT done`", sqlPkg},
	{"sql-renew-any-token", false, "sqldedup/sqldedup.go",
		"interval '1 microsecond'\nWHERE key = $1 AND token = $2 AND NOT done`\n\td.completeSQL", "interval '1 microsecond'\nWHERE key = $1 AND (token = $2 OR true) AND NOT done`\n\td.completeSQL", sqlPkg},

	// Amounts and validation.
	{"amount-scale", false, "amount.go",
		"return decimalToSen(s, whole+frac, 2-len(frac))", "return decimalToSen(s, whole+frac, 3-len(frac))", root},
	{"order-minimum", false, "checkout.go",
		"if a < MinOrderAmount {", "if a < 0 {", root},
	{"b2b-minimum-ignored", false, "checkout.go",
		"a >= MinOrderAmount && a < MinB2BAmount {", "a >= MinOrderAmount && a < MinOrderAmount {", root},
	// Configuration: the environment's errors say what to set; the pay
	// host is used; a blocked bank is offline.
	{"env-unset-no-hint", false, "config.go",
		`"%w: %s is not set: want %s", ErrNoCredential, name, envVarNamed(name).holds)`, `"%w: %s is not set%.0s", ErrNoCredential, name, envVarNamed(name).holds)`, root},
	{"pay-host-ignored", false, "client.go",
		"case c.payURL != nil:", "case c.payURL != nil && false:", root},
	{"blocked-bank-online", false, "banks.go",
		"Online: onlineStatus[strings.ToLower(f[2])]", "Online: f[2] != \"\"", root},
	{"webhook-negative-amount", false, "webhook_fields.go",
		"if tx.Amount >= 0 {", "if true {", root},
	// A repeated orderno past the memory budget: equal hashes taken for
	// equal ordernos (a false repeat), or the repeats found at the end lost.
	{"orderno-hash-collision", false, "internal/ordernoset/merge.go",
		"return a.hash == b.hash && bytes.Equal(a.no, b.no)", "return a.hash == b.hash || bytes.Equal(a.no, b.no)", []string{"./internal/ordernoset", "."}},
	{"orderno-hash-collision-in-memory", false, "internal/ordernoset/set.go",
		"if e.hash == h && string(s.bytesOf(e)) == no {", "if e.hash == h {", []string{"./internal/ordernoset", "."}},
	{"orderno-late-repeats-lost", false, "webhook_decode.go",
		"err = reportLateRepeats(v, d.seen)", "_ = reportLateRepeats", root},

	// The sender's report and the transport's retry rules.
	{"sender-continues-after-401", false, "webhook_sender.go",
		"return ctx.Err() != nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrRedirect) || tlsFailure(err)", "return ctx.Err() != nil || errors.Is(err, ErrRedirect) || tlsFailure(err)", root},
	{"5xx-outcome-known", false, "transport.go",
		"return apiErr.StatusCode >= 500", "return false", root},
	{"signed-post-retried-after-reset", false, "transport.go",
		"return notSent(err)\n}", "return true\n}", root},
	{"plain-http-server-retried", false, "transport.go",
		`"http: server gave HTTP response to HTTPS client": false,`, `"http: server gave HTTP response to HTTPS client": true,`, root},
	{"handshake-timeout-maybe-sent", false, "transport.go",
		"\t_, untyped := untypedHandshake(err)\n\treturn untyped", "\t_, untyped := untypedHandshake(err)\n\treturn untyped && false", root},
	{"tls-handshake-retried", false, "transport.go",
		"return status == 0 && !tlsFailure(err) || status", "return status == 0 || status", root},
	{"no-answer-counts-as-reached", false, "transport.go",
		"e.reached = e.reached || !notSent(err)", "e.reached = true", root},
	{"outcomes-ignore-not-sent", false, "webhook_report.go",
		"TxNotSent: &r.NotSent}", "TxNotSent: &r.Unconfirmed}", root},

	// Paging.
	{"max-pages-ignored", false, "paging.go",
		"if n+1 >= pg.maxPages {", "if false {", root},
	{"total-pages-cut-short-ignored", false, "paging.go",
		"case p.HasTotalPages && n+1 < p.TotalPages:", "case false:", root},

	// Issue 32: the classes of an independent audit's survivors.
	// Lease timing: a renewal's deadline counts from when it was sent, and
	// a failed renewal is retried a tenth of the period later.
	{"lease-renewal-counted-from-answer", false, "callback_lease.go",
		"c.heldUntil = sent.Add(c.lease)", "c.heldUntil = time.Now().Add(c.lease); _ = sent", root},
	{"lease-renewal-deadline-kept", false, "callback_lease.go",
		"c.heldUntil = sent.Add(c.lease)", "_ = sent", root},
	{"lease-failed-renewal-retried-late", false, "callback_lease.go",
		"c.tick.Reset(max(c.every/10, time.Millisecond))", "c.tick.Reset(c.every)", root},
	// Stale status across order numbers.
	{"stale-only-under-paying-orderno", false, "callback_event.go",
		"if cb.Stale = paid != nil; cb.Stale {", "if cb.Stale = paid != nil && *paid == cb.OrderNo; cb.Stale {", root},
	// Reconciliation's hold-back rules.
	{"reconcile-refno-prefix-accepted", false, "reconcile.go",
		`asked != "" && base != p.RefNo {`, `asked != "" && base != p.RefNo[:min(len(base), len(p.RefNo))] {`, root},
	{"reconcile-refno-success-only", false, "reconcile.go",
		`asked != "" && base != p.RefNo {`, `asked != "" && base != p.RefNo && p.Status == StatusSuccess {`, root},
	{"reconcile-agency-success-only", false, "reconcile.go",
		`if agency != "" && p.Agency != "" && p.Agency != agency {`, `if agency != "" && p.Agency != "" && p.Agency != agency && p.Status == StatusSuccess {`, root},
	// Configured limits, on every path.
	{"body-limit-default-when-read", false, "callback_handler.go",
		"readCallbackBody(http.MaxBytesReader(w, r.Body, limit), ", "readCallbackBody(http.MaxBytesReader(w, r.Body, DefaultCallbackBodyLimit), ", root},
	{"body-limit-default-after-middleware", false, "callback_body.go",
		"if r.ContentLength > limit {", "if r.ContentLength > DefaultCallbackBodyLimit {", root},
	{"stream-value-cap-default", false, "webhook_validator.go",
		"return validateStream(r, jsonscan.Chunk, v)", "return validateStream(r, jsonscan.Chunk, v.WithMaxValueBytes(0))", root},
	{"value-cap-problem-names-default", false, "webhook_decode.go",
		"OnLong: longValueProblem(v, rules.maxValueBytes())", "OnLong: longValueProblem(v, DefaultMaxValueBytes)", root},
	{"max-pages-one-ignored", false, "paging.go",
		"if maxPages <= 0 {", "if maxPages <= 1 {", root},
	// Retry rules per endpoint: no signed POST after a reset.
	{"qr-retried-after-reset", false, "qr.go",
		"retryable: retrySignedPost, maxBody: maxCheckoutBody}", "retryable: retryTransient, maxBody: maxCheckoutBody}", root},
	{"order-retried-after-reset", false, "create_order.go",
		"\t\tretryable: retrySignedPost,", "\t\tretryable: retryTransient,", root},
	// Create-or-find (docs/assumptions.md A-create-or-find): a lost
	// answer's order looked up before it is sent again, a found order
	// reported as found, a refused create not looked up.
	{"create-or-find-lookup-skipped", false, "create_order.go",
		"rec, lerr := c.LookupOrderByRefNo(ctx, ref)", `rec, lerr := (*OrderRecord)(nil), notFound("refno", ref)`, root},
	{"create-or-find-found-as-created", false, "create_order.go",
		"return &CheckoutResult{Found: true, Record: rec}, nil", "return &CheckoutResult{Record: rec}, nil", root},
	{"create-or-find-refusal-looked-up", false, "create_order.go",
		"refusedAgain := sends > 1 && answerStatus(err)/100 == 4", "refusedAgain := sends > 0 && answerStatus(err)/100 == 4", root},
	// HookTx commits only under its claim's token (a weakened check must
	// fail fast, not after HookTimeout).
	{"sql-hook-tx-lost-claim-committed", false, "sqldedup/hook_tx.go",
		"\t\tif n != 1 {", "\t\tif n > 1 {", sqlPkg},
	// One ID per logical call (issue 30): a retry must not draw a new one.
	{"call-id-per-attempt", false, "transport.go",
		"t.once(ctx, x, n, st.callID)", "t.once(ctx, x, n, callid.New())", root},
	// Signatures dated on the service's clock (issue 30): the learnt offset
	// must reach exp.
	{"sign-on-local-clock", false, "client.go",
		"return c.now().Add(c.transport.clock.Offset())", "return c.now()", root},

	// The sandbox's test switches: duplicates sent once, a test clock that
	// leaves a wait due exactly at the advanced-to time unfired.
	{"sandbox-duplicates-sent-once", false, "gatewaytest/callbacks.go",
		"attempts := make([]Attempt, max(dup.n, 1))", "attempts := make([]Attempt, 1)", sandbox},
	{"test-clock-due-time-unfired", false, "gatewaytest/clock.go",
		"if len(c.timers) == 0 || c.timers[0].at.After(target) {", "if len(c.timers) == 0 || !c.timers[0].at.Before(target) {", sandbox},

	// The pending watch: a failure not taken as settled, the give-up hook
	// skipped, the last lookup not pulled in to the maximum age, the fleet's
	// budget ignored, a take that does not hold what it hands out, a
	// give-up whose hook failed dropped, a finish without the hold; on
	// PostgreSQL a take that waits on rows another replica is taking, or
	// takes them unlocked.
	{"watch-failed-not-settled", false, "watch/watch.go",
		"\tpaygate.OutcomeFailed:           true,\n", "", watchPkg},
	{"watch-give-up-hook-skipped", false, "watch/watch.go",
		"\tif w.OnGiveUp == nil {", "\tif true {", watchPkg},
	{"watch-max-age-not-kept", false, "watch/watch.go",
		"if o.Next.After(end) {", "if false {", watchPkg},
	{"watch-budget-ignored", false, "watch/watch.go",
		"granted, err := w.Store.Spend(ctx, now, w.budget(), 1)", "_, err = w.Store.Spend(ctx, now, w.budget(), 1)\n\tgranted := 1", watchPkg},
	{"watch-memory-take-without-hold", false, "watch/memory.go",
		"o.Next, o.Token = now.Add(lease), rand.Text()", "o.Token = rand.Text()", watchPkg},
	{"watch-failed-give-up-dropped", false, "watch/watch.go",
		"return errors.Join(err, notLost(w.Store.Reschedule(ctx, o)))\n\t\t}\n\t\tp.GivenUp++", "_ = err\n\t\t}\n\t\tp.GivenUp++", watchPkg},
	{"watch-memory-finish-without-hold", false, "watch/memory.go",
		"if !ok || o.Token == \"\" || held.Token != o.Token {\n\t\treturn ErrLost\n\t}\n\tdelete(m.orders, o.RefNo)", "if _ = held; !ok {\n\t\treturn ErrLost\n\t}\n\tdelete(m.orders, o.RefNo)", watchPkg},
	{"watch-sql-take-waits", false, "sqldedup/watch_store.go",
		"LIMIT $2 FOR UPDATE SKIP LOCKED)", "LIMIT $2 FOR UPDATE)", sqlPkg},
	{"watch-sql-take-unlocked", false, "sqldedup/watch_store.go",
		"LIMIT $2 FOR UPDATE SKIP LOCKED)", "LIMIT $2)", sqlPkg},

	// The JSON scanner (internal/jsonscan), against its oracle,
	// encoding/json: an escape decoded wrong, one level of nesting too
	// many, a leading zero accepted, a lone surrogate not flagged, a value
	// of one byte over the cap kept.
	{"json-escape-letter", false, "internal/jsonscan/scan.go",
		"'n': '\\n',", "'n': 'n',", jsonPkg},
	{"json-depth-off-by-one", false, "internal/jsonscan/scan.go",
		"depth >= MaxDepth:", "depth > MaxDepth:", jsonPkg},
	{"json-leading-zero", false, "internal/jsonscan/scan.go",
		"return p.optional('0') || p.digits() > 0", "return p.digits() > 0", jsonPkg},
	{"json-lone-surrogate-utf8", false, "internal/jsonscan/scan.go",
		"p.i = save // not a pair: the next escape stands alone\n\tp.notUTF8 = true", "p.i = save // not a pair: the next escape stands alone", jsonPkg},
	{"json-cap-off-by-one", false, "internal/jsonscan/scan.go",
		"if p.maxValue > 0 && j-start > p.maxValue {", "if p.maxValue > 0 && j-start > p.maxValue+1 {", jsonPkg},
}
