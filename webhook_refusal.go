package paygate

// Reading a webhook refusal's body (docs/assumptions.md
// A-webhook-duplicates, A-webhook-refusals): outside input, read
// defensively, never trusted for more than which transactions of the
// request it names.

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate-go/paygate/zakat"
)

// refusal is what a 400, 409 or 422 body says of a request's
// transactions, by their position in the request.
type refusal struct {
	// duplicate: the body names the orderno's uniqueness.
	duplicate bool
	// stored are the positions it names as already stored.
	stored []int
	// bad are the positions it points at for another rule, with what it
	// said of each.
	bad map[int][]zakat.FieldError
}

// maxRefusalText caps a field or a rule quoted from a refusal.
const maxRefusalText = 200

// readRefusal reads body, the answer to a request carrying ordernos:
//   - JSON {"duplicates": [orderno...]}: those are stored;
//   - JSON {"errors": [{"pointer": "/transactions/<i>/<field>", "rule": ...}]}
//     (also "problems", "field" for "pointer", "message" or "detail" for
//     "rule"): a pointer at orderno whose rule speaks of uniqueness names
//     it stored; any other names it bad;
//   - a JSON "message", "error", "detail" or "title", or a body that is not
//     JSON, naming orderno and uniqueness: a duplicate refusal, naming the
//     request's ordernos that appear in it as words, but the last word of a
//     body that may have been cut (maxErrorBody bytes, APIError.Body).
func readRefusal(body []byte, ordernos []string) refusal {
	var r refusal
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		r.readText(wholeWords(body), ordernos)
		return r
	}
	var listed []string
	if json.Unmarshal(doc["duplicates"], &listed) == nil && len(listed) > 0 {
		r.duplicate = true
		r.nameStored(listed, ordernos)
	}
	for _, key := range []string{"errors", "problems"} {
		var problems []map[string]json.RawMessage
		if json.Unmarshal(doc[key], &problems) == nil {
			for _, p := range problems {
				r.readProblem(p, len(ordernos))
			}
		}
	}
	for _, key := range []string{"message", "error", "detail", "title"} {
		var text string
		if json.Unmarshal(doc[key], &text) == nil && namesUniqueness(text) {
			r.duplicate = true
			r.nameStored(words(text), ordernos)
		}
	}
	return r
}

// readText reads a body that is not JSON.
func (r *refusal) readText(text string, ordernos []string) {
	if namesUniqueness(text) {
		r.duplicate = true
		r.nameStored(words(text), ordernos)
	}
}

// readProblem reads one problem of an "errors" list.
func (r *refusal) readProblem(p map[string]json.RawMessage, n int) {
	pointer, rule, value := jsonString(p, "pointer", "field"), jsonString(p, "rule", "message", "detail"), jsonString(p, "value")
	rest, ok := strings.CutPrefix(pointer, "/transactions/")
	digits, field, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(digits)
	if !ok || err != nil || i < 0 || i >= n || digits != strconv.Itoa(i) {
		return
	}
	if field == "orderno" && isUniqueness(rule) {
		r.duplicate = true
		r.stored = appendOnce(r.stored, i)
		return
	}
	if r.bad == nil {
		r.bad = map[int][]zakat.FieldError{}
	}
	r.bad[i] = append(r.bad[i], zakat.FieldError{Field: oneLine(field), Rule: oneLine(rule), Value: oneLine(value)})
}

// nameStored adds the positions of ordernos found among names.
func (r *refusal) nameStored(names, ordernos []string) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	for i, no := range ordernos {
		if set[no] {
			r.stored = appendOnce(r.stored, i)
		}
	}
}

// appendOnce appends i to list unless it holds it.
func appendOnce(list []int, i int) []int {
	for _, j := range list {
		if j == i {
			return list
		}
	}
	return append(list, i)
}

// jsonString is the first of keys in p that holds a JSON string.
func jsonString(p map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		var s string
		if json.Unmarshal(p[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// namesUniqueness reports whether text names the orderno and its
// uniqueness ("orderno already stored", "duplicate order_no").
func namesUniqueness(text string) bool {
	t := strings.ToLower(text)
	return (strings.Contains(t, "orderno") || strings.Contains(t, "order_no") || strings.Contains(t, "order no")) && isUniqueness(t)
}

// isUniqueness reports whether a rule speaks of the orderno's uniqueness
// among what is stored, not within the batch ("must be unique in the
// batch": two of the request's ordernos the service reads as one, which
// proves nothing stored).
func isUniqueness(rule string) bool {
	t := strings.ToLower(rule)
	for _, w := range []string{"in the batch", "in batch", "in this batch", "within the batch", "in the same batch", "in the request", "in the same request"} {
		if strings.Contains(t, w) {
			return false
		}
	}
	for _, w := range []string{"unique", "duplicate", "already", "exists", "taken"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// words splits text at white space, commas, semicolons, quotes and
// brackets: the ordernos a plain answer may list.
func words(text string) []string { return strings.FieldsFunc(text, wordBreak) }

// wordBreak reports whether c separates the words of a refusal's text.
func wordBreak(c rune) bool {
	return unicode.IsSpace(c) || strings.ContainsRune(",;:\"'`[](){}<>", c)
}

// wholeWords is body as text, without its last word when body may have
// been cut (APIError.Body keeps maxErrorBody bytes): a cut orderno may
// spell another of the request (INV-1 of INV-10), which the service never
// named. A cut JSON body does not parse and is read so.
func wholeWords(body []byte) string {
	text := string(body)
	if len(body) < maxErrorBody {
		return text
	}
	return text[:max(0, strings.LastIndexFunc(text, wordBreak))]
}

// oneLine is s from a refusal made safe to quote: valid UTF-8, control
// characters (line breaks included) as spaces, at most maxRefusalText bytes.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return ' '
		}
		return c
	}, s)
	if len(s) > maxRefusalText {
		cut := maxRefusalText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}
