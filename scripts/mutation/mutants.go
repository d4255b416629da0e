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
// seconds.
const soak = "^TestCrashFulfilTxAcrossProcesses$"

// Package sets the mutants are tested with.
var (
	root   = []string{"."}
	sqlPkg = []string{"./sqldedup"}
)

// mutants is the table of defects, the fifteen of the issue first.
var mutants = []mutant{
	// The fifteen of issue 20.
	{"signature-length", true, "sign.go",
		"for i := 0; i < 8; i++ {", "for i := 0; i < 7; i++ {", root},
	{"verification-result", true, "sign.go",
		"return ErrSignatureMismatch\n}\n\n// receivedSignature", "return nil\n}\n\n// receivedSignature", root},
	{"exp-ignored", true, "sign.go",
		"if now.Unix() > exp {", "if now.Unix() > exp && false {", root},
	{"fulfil-pending", true, "callback_event.go",
		"if cb.Status != StatusSuccess {", "if cb.Status != StatusSuccess && cb.Status != StatusPending {", root},
	{"skip-complete", true, "callback_lease.go",
		"return c.ev.d.Complete(sctx, c.key, c.token, c.result)", "_ = sctx\n\treturn nil", root},
	{"steal-live-claim", true, "dedupe.go",
		"} else if c := s.arena.chunk(ref); m.at(now) < c.expires() {", "} else if c := s.arena.chunk(ref); m.at(now) < c.expires() && c.token() == 0 {", root},
	{"no-renewal", true, "callback_lease.go",
		"err := c.ev.d.Renew(ctx, c.key, c.token, c.lease)", "err := error(nil); _ = ctx", root},
	{"follow-redirects", true, "transport.go",
		"c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }", "c.CheckRedirect = nil", root},
	{"token-redaction", true, "secret.go",
		"func (secret) String() string { return redacted }", "func (s secret) String() string { return s.reveal() }", root},
	{"orderno-uniqueness", true, "webhook_rules.go",
		"if first, dup := seen.firstOrAdd(orderNo, i); dup {", "if first, dup := seen.firstOrAdd(orderNo, i); dup && false {", root},
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
	{"url-signature-redaction", false, "redact.go",
		`return []string{"signature", "token",`, `return []string{"token",`, root},

	// Signing and verification.
	{"half-signature-compared", false, "sign.go",
		"if hmac.Equal(got[:], want[:]) {", "if hmac.Equal(got[:8], want[:8]) {", root},
	{"long-signature-accepted", false, "sign.go",
		"if len(sig) != 16 {", "if len(sig) < 16 {", root},
	{"repeated-signature-accepted", false, "sign.go",
		"if len(sigs) > 1 || !lowerHex16(want, sigs[0]) {", "if !lowerHex16(want, sigs[0]) {", root},
	{"exp-repeated-accepted", false, "sign.go",
		"if err != nil || len(form[fieldExp]) != 1 {", "if err != nil {", root},

	// The vector escaper (escape_amd64.s): a load across a page, an escape
	// of a kept byte or one cut short copied as it is, the mask of the
	// bytes to escape inverted.
	{"vector-load-crosses-page", false, "escape_amd64.s",
		"CMPQ AX, $4080\n\tJA tail", "CMPQ AX, $4095\n\tJA tail", root},
	{"vector-key-copy-crosses-page", false, "escape_amd64.s",
		"CMPQ AX, $4080\n\tJA copy_bytes", "CMPQ AX, $4095\n\tJA copy_bytes", root},
	{"raw-kept-escape-copied", false, "escape_amd64.s",
		"JNZ recheck        // an escape of a byte RFC 3986 keeps", "NOP", root},
	{"raw-short-escape-copied", false, "escape_amd64.s",
		"JGE recheck        // fewer than two bytes after it", "NOP", root},
	{"vector-every-key-copied", false, "escape_amd64.go",
		"true, uint64(plain))", "true, ^uint64(0))", root},
	{"vector-body-plain-misaligned", false, "sign.go",
		"s.fields[:at], s.ends, s.plain, encFormGo)", "s.fields[:at], s.ends, s.plain>>at, encFormGo)", root},
	{"vector-escape-mask-inverted", false, "escape_amd64.s",
		"NOTQ DX            // the substituted bytes a form encoding keeps", "NOP", root},
	{"vector-plain-mask-rotated", false, "escape_amd64.s",
		"SHRQ $1, plain-32(SP)", "RORQ $1, plain-32(SP)", root},

	// The handler and the in-memory deduper.
	{"double-payment-silent", false, "callback_event.go",
		"case paid == cb.OrderNo:", "case paid != \"\":", root},
	{"failed-hook-not-released", false, "callback_event.go",
		"c.release(ctx)\n\t\treturn notDone", "return notDone", root},
	{"memory-any-token", false, "dedupe.go",
		"if ref == 0 || !m.isToken(token, m.store.arena.chunk(ref).token()) {", "if ref == 0 || m.store.arena.chunk(ref).token() == 0 {", root},
	{"memory-complete-not-done", false, "dedupe.go",
		"c.setResult(result)\n\tc.setToken(0)", "c.setResult(result)", root},
	// The store under MemoryDeduper (dedupe_store.go).
	{"memory-completed-forgotten-early", false, "dedupe.go",
		"s.retrack(ref, t.tag(pos), m.at(now.Add(retention)), retention)", "s.retrack(ref, t.tag(pos), m.at(now), retention)", root},
	{"memory-lapsed-claim-kept", false, "dedupe.go",
		"} else if c := s.arena.chunk(ref); m.at(now) < c.expires() {", "} else if c := s.arena.chunk(ref); m.at(now) < c.expires() || c.token() != 0 {", root},
	{"memory-expiry-drops-live-keys", false, "dedupe_store.go",
		"if first == nil || now < rec.expires {", "if first == nil {", root},
	{"memory-one-table-size", false, "dedupe_store.go",
		"return [...]int{672, 848, tableSlots}", "return [...]int{tableSlots, tableSlots, tableSlots}", root},
	{"memory-split-loses-keys", false, "dedupe_store.go",
		"for i := first + span; i < first+2*span; i++ {", "for i := first + span; i < first+span; i++ {", root},
	{"memory-split-wrong-half", false, "dedupe_store.go",
		"if uint32(slot>>32)&bit != 0 {\n\t\t\t\tto = up", "if uint32(slot>>32)&bit == 0 {\n\t\t\t\tto = up", root},
	{"memory-remove-breaks-probe-path", false, "dedupe_store.go",
		"if t.dist(home, next) >= t.dist(pos, next) {", "if t.dist(home, next) > t.dist(pos, next) {", root},

	// sqldedup (needs PAYGATE_TEST_POSTGRES_DSN).
	{"sql-lapsed-claim-kept", false, "sqldedup/sqldedup.go",
		"WHERE t.expires_at <= now();", "WHERE t.expires_at <= now() - interval '1 day';", sqlPkg},
	{"sql-done-within-a-day-busy", false, "sqldedup/sqldedup.go",
		"WHERE key = $1::text AND expires_at > now()\n), CASE", "WHERE key = $1::text AND expires_at > now() + interval '1 day'\n), CASE", sqlPkg},
	// The same two in the one-statement claim of a table Migrate has not
	// given its claim function.
	{"sql-fallback-lapsed-claim-kept", false, "sqldedup/sqldedup.go",
		"WHERE t.expires_at <= now()\n\tRETURNING", "WHERE t.expires_at <= now() - interval '1 day'\n\tRETURNING", sqlPkg},
	{"sql-fallback-done-within-a-day-busy", false, "sqldedup/sqldedup.go",
		"WHERE key = $1::text AND expires_at > now()\n), claimed AS", "WHERE key = $1::text AND expires_at > now() + interval '1 day'\n), claimed AS", sqlPkg},
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
	{"webhook-negative-amount", false, "webhook_fields.go",
		"if tx.Amount >= 0 {", "if true {", root},

	// The sender's report and the transport's retry rules.
	{"sender-continues-after-401", false, "webhook_sender.go",
		"if ctx.Err() != nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrRedirect) {", "if ctx.Err() != nil || errors.Is(err, ErrRedirect) {", root},
	{"5xx-outcome-known", false, "transport.go",
		"return apiErr.StatusCode >= 500", "return false", root},
	{"signed-post-retried-after-reset", false, "transport.go",
		"return notSent(err)\n}", "return true\n}", root},

	// Paging.
	{"max-pages-ignored", false, "paging.go",
		"if n+1 >= pg.maxPages {", "if false {", root},
	{"total-pages-cut-short-ignored", false, "paging.go",
		"case p.HasTotalPages && n+1 < p.TotalPages:", "case false:", root},
}
