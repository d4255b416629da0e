// Package scrub finds a request's credentials in text the SDK is about to
// keep (an error answer's body, a value it quotes) and replaces them: each
// secret is looked for as sent, URL-encoded, JSON- and HTML-escaped, in
// any ASCII case. Which values are secrets is the root package's rule
// (requestSecrets).
package scrub

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// Marker is what a secret is replaced by.
const Marker = "[REDACTED]"

// Forms is s as sent, URL-encoded and JSON- or HTML-escaped, in ASCII
// lower case (Replace matches without regard to ASCII case); nil for the
// empty string.
func Forms(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, enc := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
		out = append(out, enc, jsonEscape(enc, false), jsonEscape(enc, true), html.EscapeString(enc))
	}
	for i := range out {
		out[i] = Lower(out[i])
	}
	return out
}

// jsonEscape is s as it appears between the quotes of a JSON string, with
// <, > and & escaped when escapeHTML is set (Go's default) or kept.
func jsonEscape(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// Lower lower-cases ASCII letters only, so that byte offsets in the
// result are offsets in s.
func Lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Replace returns body with every occurrence of each secret (in lower
// case, as Forms gives them) replaced by Marker, matching without regard
// to ASCII case. Overlapping occurrences become one marker.
func Replace(body string, secrets []string) string {
	if len(secrets) == 0 || body == "" {
		return body
	}
	lower := Lower(body)
	hit := make([]bool, len(body)) // bytes inside an occurrence
	found := false
	for _, s := range secrets {
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], s)
			if i < 0 {
				break
			}
			for j := from + i; j < from+i+len(s); j++ {
				hit[j] = true
			}
			found = true
			from += i + 1
		}
	}
	if !found {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if !hit[i] {
			b.WriteByte(body[i])
			continue
		}
		b.WriteString(Marker)
		for i+1 < len(body) && hit[i+1] {
			i++
		}
	}
	return b.String()
}

// Longest is the length of the longest of secrets (0 for none): how far past
// a cut an occurrence that starts before it can reach.
func Longest(secrets []string) int {
	n := 0
	for _, s := range secrets {
		n = max(n, len(s))
	}
	return n
}
