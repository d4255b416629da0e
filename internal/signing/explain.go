package signing

import (
	"crypto/hmac"
	"net/url"
	"time"
)

// Message is one exact string a signature is computed over, with the
// encoding that wrote it: what an operator compares when the gateway
// rejects a signature or a callback does not verify.
type Message struct {
	// Encoding is the encoding of the query in Text.
	Encoding Encoding
	// Text is the exact string the HMAC is computed over.
	Text string
}

// URLMessage returns the message SignURL signs for rawURL at now.
func URLMessage(rawURL string, now time.Time) (Message, error) {
	u, q, err := parseURL(rawURL)
	if err != nil {
		return Message{}, err
	}
	return FormMessage(urlPath(u)+"?", q, now)
}

// FormMessage returns the message SignForm signs for prefix and form at
// now.
func FormMessage(prefix string, form url.Values, now time.Time) (Message, error) {
	fields, err := collect(nil, form, expValue(now))
	if err != nil {
		return Message{}, err
	}
	return Message{RFC3986, string(appendQuery([]byte(prefix), fields, RFC3986))}, nil
}

// CallbackMessages returns every message VerifyCallback tries for form, in
// the order it tries them.
func CallbackMessages(form url.Values) ([]Message, error) {
	fields, err := collect(nil, form, "")
	if err != nil {
		return nil, err
	}
	canonical := appendQuery(nil, fields, Form)
	variants, n := callbackVariants(canonical)
	out := []Message{{Form, string(canonical)}}
	for _, e := range variants[:n] {
		out = append(out, Message{e, string(appendQuery(nil, fields, e))})
	}
	return out, nil
}

// Candidate is one message VerifyCallback tries, with the signature a key
// gives it.
type Candidate struct {
	Message
	// Expected is the key's signature of Text, in lower case.
	Expected string
	// Matches reports whether Expected equals the signature received.
	Matches bool
}

// Explain lists what VerifyCallback computes for form under k: the
// signature received (the field as sent, "" when absent) and every
// candidate message in the order tried, each with k's signature of it. The
// key appears nowhere in the result.
func Explain(form url.Values, k *Key) (received string, candidates []Candidate, err error) {
	msgs, err := CallbackMessages(form)
	if err != nil {
		return "", nil, err
	}
	received = form.Get(FieldSignature)
	want, readable := ParseSignature(received)
	readable = readable && len(form[FieldSignature]) == 1
	for _, m := range msgs {
		sig := k.Sign([]byte(m.Text))
		candidates = append(candidates, Candidate{m, string(sig[:]), readable && hmac.Equal(sig[:], want[:])})
	}
	return received, candidates, nil
}
