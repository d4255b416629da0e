package signing

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// expValue is the exp field of a signature made at now: Unix seconds of
// now + TTL.
func expValue(now time.Time) string {
	return strconv.FormatInt(now.Add(TTL).Unix(), 10)
}

// SignURL signs an outbound GET (docs/protocol.md "Signature algorithm",
// outbound GET): every query parameter of rawURL with exp = now + 60 s,
// sorted, RFC 3986 encoded, the message `<path>?<query>` with the path as
// escaped in rawURL ("/" when empty). It returns scheme://host, that
// message, and `&signature=<16 hex>`. The query is decoded first, so + in
// it is a space and is signed as %20; exp and signature in rawURL are
// replaced; a parameter with several values is an error wrapping
// ErrMultipleValues. rawURL must be absolute, with no fragment or user
// information.
func SignURL(k *Key, rawURL string, now time.Time) (string, error) {
	u, q, err := parseURL(rawURL)
	if err != nil {
		return "", err
	}
	var space fieldSpace
	fields, err := collect(space[:0], q, expValue(now))
	if err != nil {
		return "", err
	}
	s := k.get()
	defer k.put(s)
	s.buf = append(s.buf, u.Scheme+"://"+u.Host...)
	start := len(s.buf)
	s.buf = append(s.buf, urlPath(u)+"?"...)
	s.buf = appendQuery(s.buf, fields, RFC3986)
	sig := s.sign(s.buf[start:])
	s.buf = append(s.buf, "&"+FieldSignature+"="...)
	s.buf = append(s.buf, sig[:]...)
	return string(s.buf), nil
}

// parseURL splits an absolute URL to sign into its parts and its decoded
// query.
func parseURL(rawURL string) (*url.URL, url.Values, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, fmt.Errorf("paygate: sign URL: %w", err)
	}
	switch {
	case u.Scheme == "" || u.Host == "":
		return nil, nil, errors.New("paygate: sign URL: need an absolute URL with scheme and host")
	case u.Fragment != "" || u.RawFragment != "":
		return nil, nil, errors.New("paygate: sign URL: a fragment is never sent and cannot be signed")
	case u.User != nil:
		return nil, nil, errors.New("paygate: sign URL: user information is not allowed")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, nil, fmt.Errorf("paygate: sign URL: query: %w", err)
	}
	return u, q, nil
}

// urlPath is the path of u as signed: as escaped in the URL, "/" when
// empty.
func urlPath(u *url.URL) string {
	if p := u.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// SignForm signs an outbound POST body (docs/protocol.md "Signature
// algorithm", outbound POST): the message is prefix followed by the RFC 3986
// query of form with exp = now + 60 s. prefix is "" by the protocol, or
// `<path>?` for a service that signs POSTs with their path
// (docs/assumptions.md A-post-path). It returns a copy of form with exp and
// signature set; fields with no value are left out, exp and signature in
// form are replaced, and a field with several values is an error wrapping
// ErrMultipleValues.
func SignForm(k *Key, prefix string, form url.Values, now time.Time) (url.Values, error) {
	var space fieldSpace
	fields, err := collect(space[:0], form, expValue(now))
	if err != nil {
		return nil, err
	}
	s := k.get()
	defer k.put(s)
	return signedCopy(fields, s.signOutbound(prefix, fields)), nil
}

// SignFormBody is SignForm(k, prefix, form, now).Encode(): the signed POST
// body, form-encoded as url.Values.Encode writes it (space as +, while the
// signature covers %20: docs/assumptions.md A-post-body), without the
// url.Values in between.
func SignFormBody(k *Key, prefix string, form url.Values, now time.Time) (string, error) {
	var space fieldSpace
	fields, err := collect(space[:0], form, expValue(now))
	if err != nil {
		return "", err
	}
	s := k.get()
	defer k.put(s)
	sig := s.signOutbound(prefix, fields)
	at, _ := slices.BinarySearchFunc(fields, FieldSignature, func(f field, key string) int {
		return strings.Compare(f.key, key)
	})
	fields = slices.Insert(fields, at, newField(FieldSignature, string(sig[:])))
	return string(appendQuery(s.buf[:0], fields, Form)), nil
}

// signOutbound signs prefix and the RFC 3986 query of the sorted fields.
func (s *state) signOutbound(prefix string, fields []field) Signature {
	s.buf = append(s.buf[:0], prefix...)
	s.buf = appendQuery(s.buf, fields, RFC3986)
	return s.sign(s.buf)
}

// SignCallback signs a callback form as the gateway does (docs/protocol.md
// "Signature algorithm", callback, from the sender's side): every field but
// signature, sorted, form-encoded with space as +, no exp. It returns a copy
// of form with the signature set.
func SignCallback(k *Key, form url.Values) (url.Values, error) {
	var space fieldSpace
	fields, err := collect(space[:0], form, "")
	if err != nil {
		return nil, err
	}
	s := k.get()
	defer k.put(s)
	return signedCopy(fields, s.sign(appendQuery(s.buf, fields, Form))), nil
}

// signedCopy returns a new url.Values holding fields and the signature.
// The values share one backing array, each capped, so the copy costs two
// allocations besides the map.
func signedCopy(fields []field, sig Signature) url.Values {
	n := len(fields)
	vals := make([]string, n+1)
	out := make(url.Values, n+1)
	for i, f := range fields {
		vals[i] = f.value
		out[f.key] = vals[i : i+1 : i+1]
	}
	vals[n] = string(sig[:])
	out[FieldSignature] = vals[n:]
	return out
}
