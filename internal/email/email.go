// Package email holds the root package's one e-mail rule
// (paygate's validEmail: a plain addr-spec, docs/assumptions.md A-email), its parts checked one by one.
package email

import "strings"

// Rule is the text of a broken Valid rule, for every e-mail field (orders,
// webhook records).
const Rule = "must be a plain e-mail address (name@example.com: no display name, quotes or [address] literal)"

// Valid reports whether s is a plain addr-spec as paygate's validEmail
// documents it: a dot-atom local part of 1 to 64 characters, @, and a
// domain of dot-separated labels of letters, digits and inner hyphens; 254
// characters at most.
func Valid(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if len(s) > 254 || at < 1 || at > 64 {
		return false
	}
	return validLocalPart(s[:at]) && validDomain(s[at+1:])
}

// validLocalPart is Valid's rule for the part before @: a dot-atom,
// atext characters in dot-separated runs.
func validLocalPart(local string) bool {
	if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return false
	}
	for i := 0; i < len(local); i++ {
		if c := local[i]; !isAlnum(c) && c != '.' && strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) < 0 {
			return false
		}
	}
	return true
}

// validDomain is Valid's rule for the part after @: dot-separated
// labels, no trailing dot.
func validDomain(domain string) bool {
	if domain == "" || domain[len(domain)-1] == '.' {
		return false
	}
	for domain != "" {
		label, rest, _ := strings.Cut(domain, ".")
		if !validLabel(label) {
			return false
		}
		domain = rest
	}
	return true
}

// validLabel is Valid's rule for one label of the domain: 1 to 63
// letters, digits and inner hyphens.
func validLabel(label string) bool {
	if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
		return false
	}
	for i := 0; i < len(label); i++ {
		if !isAlnum(label[i]) && label[i] != '-' {
			return false
		}
	}
	return true
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
