package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/signing"
)

// keyFromEnv parses PAYGATE_API_KEY (paygate.KeyFromEnv: its errors say
// what the variable must hold).
func keyFromEnv(e env) (paygate.Key, bool) {
	k, err := paygate.KeyFromEnv()
	if err != nil {
		fail(e, "%v", err)
		return paygate.Key{}, false
	}
	return k, true
}

// runSign signs a URL or a form with PAYGATE_API_KEY.
func runSign(e env, args []string) int {
	fs := newFlags(e, "sign", "(-url URL | -form 'k=v&k=v') [-explain] [-at UNIX]",
		"Signs an outbound GET URL or POST form with PAYGATE_API_KEY (exp = now + 60 s) and prints it.")
	rawURL := fs.String("url", "", "the GET URL to sign")
	form := fs.String("form", "", "the POST form to sign, URL-encoded (- reads standard input)")
	explain := fs.Bool("explain", false, "also print the exact message that is signed")
	at := fs.Int64("at", 0, "sign as of this Unix time instead of now")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if (*rawURL == "") == (*form == "") {
		return usageError(e, fs, "give exactly one of -url and -form")
	}
	key, ok := keyFromEnv(e)
	if !ok {
		return exitUsage
	}
	now := time.Now()
	if *at != 0 {
		now = time.Unix(*at, 0)
	}
	if *rawURL != "" {
		signed, err := paygate.SignURL(key, *rawURL, now)
		if err != nil {
			return fail(e, "%v", err)
		}
		if *explain {
			msg, _ := signing.URLMessage(*rawURL, now)
			fmt.Fprintf(e.stdout, "message (%s): %s\n", msg.Encoding, msg.Text)
		}
		fmt.Fprintln(e.stdout, signed)
		return exitOK
	}
	vals, st := readForm(e, *form)
	if st != exitOK {
		return st
	}
	signed, err := paygate.SignForm(key, vals, now)
	if err != nil {
		return fail(e, "%v", err)
	}
	if *explain {
		msg, _ := signing.FormMessage("", vals, now)
		fmt.Fprintf(e.stdout, "message (%s): %s\n", msg.Encoding, msg.Text)
	}
	fmt.Fprintln(e.stdout, signed.Encode())
	return exitOK
}

// maxFormInput bounds the form readForm reads from stdin: an order to sign
// or a callback body is a few KiB (the CallbackHandler refuses a body over
// paygate.DefaultCallbackBodyLimit), so more is a mistake (a file piped
// by accident, an endless stream), refused before it fills memory.
const maxFormInput = 1 << 20

// readForm parses a URL-encoded form given inline or, for "-", on stdin
// (at most maxFormInput bytes).
func readForm(e env, s string) (url.Values, int) {
	s, st := readArg(e, s)
	if st != exitOK {
		return nil, st
	}
	return parseForm(e, s)
}

// readArg returns s, or for "-" standard input (at most maxFormInput
// bytes), spaces around it trimmed.
func readArg(e env, s string) (string, int) {
	if s != "-" {
		return s, exitOK
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, maxFormInput+1))
	if err != nil {
		return "", fail(e, "reading standard input: %v", err)
	}
	if len(b) > maxFormInput {
		return "", fail(e, "standard input: more than %d bytes, far more than a form (a callback body is at most %d)", maxFormInput, paygate.DefaultCallbackBodyLimit)
	}
	return strings.TrimSpace(string(b)), exitOK
}

// parseForm parses a URL-encoded form.
func parseForm(e env, s string) (url.Values, int) {
	vals, err := url.ParseQuery(s)
	if err != nil {
		return nil, fail(e, "form: %v", err)
	}
	return vals, exitOK
}

// runVerify checks a callback body with PAYGATE_API_KEY.
func runVerify(e env, args []string) int {
	fs := newFlags(e, "verify", "[-explain] BODY|-", "Verifies a callback body (the form the gateway POSTed) with PAYGATE_API_KEY. Prints\n"+
		"ok: with the refNo, status and amount verified and the encoding of the message the signature matched,\n"+
		"or missing (no signature), or mismatch. One leading ? (a body pasted from a URL's query) is dropped.")
	explain := fs.Bool("explain", false, "print the signature received and every message the verifier tries, each with the signature PAYGATE_API_KEY gives it (never the key)")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 1 {
		return usageError(e, fs, "want one BODY (or - for standard input), got %d arguments", fs.NArg())
	}
	key, ok := keyFromEnv(e)
	if !ok {
		return exitUsage
	}
	body, st := readArg(e, fs.Arg(0))
	if st != exitOK {
		return st
	}
	if rest, cut := strings.CutPrefix(body, "?"); cut {
		fmt.Fprintln(e.stderr, "paygate verify: dropped the leading ? (the body is the query after it)")
		body = rest
	}
	vals, st := parseForm(e, body)
	if st != exitOK {
		return st
	}
	// The key already parsed above; the explanation needs it in the form
	// the verifier itself uses.
	sk, err := signing.ParseKey(envOr("", paygate.EnvAPIKey))
	if err != nil {
		return fail(e, "%s: %v", paygate.EnvAPIKey, err)
	}
	received, cands, err := signing.Explain(vals, sk)
	if *explain {
		if err != nil {
			return fail(e, "%v", err)
		}
		printExplanation(e, received, cands)
	}
	switch err := paygate.VerifyCallback(vals, key); {
	case err == nil:
		fmt.Fprintln(e.stdout, verifiedLine(vals, cands))
		return exitOK
	case errors.Is(err, paygate.ErrSignatureMissing):
		fmt.Fprintln(e.stdout, "missing: no signature (the buyer's browser return; display only)")
	default:
		fmt.Fprintln(e.stdout, "mismatch:", err)
	}
	return exitInvalid
}

// printExplanation prints the signature received and each candidate
// message with the signature the key gives it.
func printExplanation(e env, received string, cands []signing.Candidate) {
	if received == "" {
		received = "(none)"
	}
	fmt.Fprintf(e.stdout, "received signature: %s\n", received)
	for _, c := range cands {
		verdict := "differs"
		if c.Matches {
			verdict = "matches"
		}
		fmt.Fprintf(e.stdout, "message (%s): %s\n  expected signature: %s (%s)\n", c.Encoding, c.Text, c.Expected, verdict)
	}
}

// verifiedFields are the fields verify's ok line names, as received.
var verifiedFields = [...]string{"refNo", "status", "amount"}

// verifiedLine is verify's answer to a body that verified: ok, the fields
// of verifiedFields as received (quoted; (none) when absent) and the
// encoding of the candidate message the signature matched.
func verifiedLine(form url.Values, cands []signing.Candidate) string {
	var b strings.Builder
	b.WriteString("ok:")
	sep := " "
	for _, name := range verifiedFields {
		v := "(none)"
		if vs, ok := form[name]; ok {
			v = strconv.Quote(strings.Join(vs, ","))
		}
		b.WriteString(sep + name + " " + v)
		sep = ", "
	}
	if i := slices.IndexFunc(cands, func(c signing.Candidate) bool { return c.Matches }); i >= 0 {
		fmt.Fprintf(&b, " (signature matches the %s encoding)", cands[i].Encoding)
	}
	return b.String()
}
