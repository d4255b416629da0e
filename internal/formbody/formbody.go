// Package formbody reads a form-encoded request body as url.ParseQuery
// does, with the same fields and the same errors, in less work: the
// callback handler parses every callback with it. It stays because
// url.ParseQuery in its place measured a duplicate signed callback over
// loopback HTTP 8 % slower per request, past issue 40's 3 % (BENCHMARKS.md
// "Per request").
package formbody

import (
	"errors"
	"net/url"
	"strings"
)

// maxFastFields is the most fields Parse reads itself; a body with
// more goes to url.ParseQuery (a callback has about eleven).
const maxFastFields = 64

// Parse is url.ParseQuery for a callback body, with the same result and
// the same errors (refusals of a semicolon or a bad escape; the limit of
// url.ParseQuery on the number of fields applies to the bodies past
// maxFastFields that it parses itself), in less work: the map is sized
// for the body's fields at once, the first value of every field shares one
// backing array, and names and values are unescaped by unescape.
func Parse(body string) (url.Values, error) {
	n := strings.Count(body, "&") + 1
	if n > maxFastFields {
		return url.ParseQuery(body)
	}
	form := make(url.Values, n)
	firsts := make([]string, 0, n)
	var err error
	for rest := body; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if strings.Contains(pair, ";") {
			err = errors.New("invalid semicolon separator in query")
			continue
		}
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		key, err1 := unescape(key)
		if err1 == nil {
			value, err1 = unescape(value)
		}
		switch {
		case err1 != nil:
			if err == nil {
				err = err1
			}
		case form[key] != nil:
			form[key] = append(form[key], value)
		default:
			firsts = append(firsts, value)
			form[key] = firsts[len(firsts)-1 : len(firsts) : len(firsts)]
		}
	}
	return form, err
}

// unescape is url.QueryUnescape, with the same result and the same
// error, copying the runs between escapes whole instead of a byte at a
// time: a callback's fpx JSON is mostly escapes and runs.
func unescape(s string) (string, error) {
	first := strings.IndexAny(s, "%+")
	if first < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		switch s[i] {
		case '+':
			b.WriteByte(' ')
			i++
		case '%':
			hi, ok1 := hexAt(s, i+1)
			lo, ok2 := hexAt(s, i+2)
			if !ok1 || !ok2 {
				return url.QueryUnescape(s) // its error, word for word
			}
			b.WriteByte(hi<<4 | lo)
			i += 3
		default:
			run := i + 1
			for run < len(s) && s[run] != '%' && s[run] != '+' {
				run++
			}
			b.WriteString(s[i:run])
			i = run
		}
	}
	return b.String(), nil
}

// hexAt decodes the hex digit at s[i]; false past the end or for another
// byte.
func hexAt(s string, i int) (byte, bool) {
	if i >= len(s) {
		return 0, false
	}
	return hexValue(s[i])
}

// hexValue decodes one hex digit of either case.
func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
