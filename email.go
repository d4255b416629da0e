package paygate

import "strings"

// ruleEmail is the text of a broken ValidEmail rule, for every e-mail field
// (orders, webhook records).
const ruleEmail = "must be a plain e-mail address (name@example.com: no display name, quotes or [address] literal)"

// ValidEmail is the SDK's one e-mail rule, for orders (docs/protocol.md A1
// `email`) and webhook records (B2 and B3 `email`), since the protocol says
// only "valid e-mail format" (docs/assumptions.md A-email). It accepts a
// bare addr-spec (RFC 5322 section 3.4.1) in its common
// form: a dot-atom local part of 1 to 64 characters, @, and a domain of
// dot-separated labels of letters, digits and inner hyphens; 254 characters at
// most. Quoted local parts, comments, display names and address literals are
// refused: the records are read by people and systems that expect a plain
// address.
func ValidEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if len(s) > 254 || at < 1 || at > 64 {
		return false
	}
	return validLocalPart(s[:at]) && validDomain(s[at+1:])
}

// validLocalPart is ValidEmail's rule for the part before @: a dot-atom,
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

// validDomain is ValidEmail's rule for the part after @: dot-separated
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

// validLabel is ValidEmail's rule for one label of the domain: 1 to 63
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
