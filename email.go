package paygate

import "github.com/paygate-go/paygate/internal/email"

// ruleEmail is the text of a broken validEmail rule, for every e-mail field
// (orders, webhook records).
const ruleEmail = email.Rule

// validEmail is the SDK's one e-mail rule, for orders (docs/protocol.md A1
// `email`) and webhook records (B2 and B3 `email`), since the protocol says
// only "valid e-mail format" (docs/assumptions.md A-email). It accepts a
// bare addr-spec (RFC 5322 section 3.4.1) in its common
// form: a dot-atom local part of 1 to 64 characters, @, and a domain of
// dot-separated labels of letters, digits and inner hyphens; 254 characters at
// most. Quoted local parts, comments, display names and address literals are
// refused: the records are read by people and systems that expect a plain
// address.
func validEmail(s string) bool { return email.Valid(s) }
