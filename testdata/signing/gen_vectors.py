#!/usr/bin/env python3
"""Signature test vectors for paygate, computed independently of the Go code.

Uses only Python's standard urllib.parse (urlencode, quote, quote_plus) and
hmac/hashlib, following docs/protocol.md "Signature algorithm":

  GET      message = <path>?<query>, query RFC 3986 encoded (quote, safe='')
  POST     message = <query>, RFC 3986 encoded
  callback message = <query>, form encoded (quote_plus), no exp
  key      = bytes.fromhex(uuid without dashes)
  sig      = hex(HMAC-SHA256(key, message))[:16]

Callback encoder variants (docs/calling-the-gateway.md, Signing): Python's
quote_plus always keeps '~', so the PHP variant (urlencode: '~' -> %7E) replaces '~' in its output, which is
exact because every other byte of a percent-encoded string is either kept as an
unreserved character or written as %XX / '+'. The WHATWG variant (browsers,
Java URLEncoder: '~' -> %7E, '*' kept) also turns '%2A' back into '*', exact
for the same reason ('%' always starts a triplet). The RFC 3986 variant (PHP's
http_build_query with PHP_QUERY_RFC3986, as the public PHP client signs) is the
callback query encoded with quote, as outbound: it differs from the canonical
message only where a field holds a space, and is emitted only then.

Deterministic: `python3 gen_vectors.py > vectors.json` reproduces the file.
"""
import hashlib
import hmac
import json
import random
import sys
from urllib.parse import quote, quote_plus, urlencode

HOST = "https://gw.example"
PATHS = [
    "/v2/checkout",
    "/api/report/v1/payment",
    "/api/report/v1/fpxrequest",
    "/api/qrcode/v1/generator",
    "/pay/AG01/fpx/REF%20001~x/10.00",
    "/pay/AG%2F02/duitnow/%E4%B8%AD/1.00",
    "/a/b%7Ec/",
]
KEYS = [
    "agency", "refNo", "amount", "email", "returnUrl", "items", "page", "start",
    "end", "is_approved", "output", "Amount", "REFNO", "Z", "a b", "k~1", "k*2",
    "x-y", "under_score", "dot.ted", "ñ", "id[0]", "status", "orderNo", "fpx",
    "extraData", "addCharge", "fpxTxnId", "fpxTxnTime", "q&a", "eq=",
]
VALUES = [
    "", "x", "hello world", "a~b", "REF001~extra", "a*b", "**", "~", "10.00",
    "1.00", "buyer@example.com", "https://shop.example/cb?x=1&y=2", "a+b",
    "100%", "!#$&'()*+,/:;=?@[]", "café", "中文", "emoji 😀", "tab\there",
    "line\nbreak", "<script>", 'quote"d', "back\\slash", "^`{|}", "0", "-._~",
    '{"fpx_debit_auth_code":"00","fpx_buyerName":"Ali bin Abu"}', "  ", "é~*",
    "nul\x00del\x7f\x1f",
]


def sign(key, msg):
    raw = bytes.fromhex(key.replace("-", ""))
    return hmac.new(raw, msg.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def rfc3986(pairs):
    return urlencode(sorted(pairs), quote_via=quote, safe="")


def form(pairs):
    return urlencode(sorted(pairs), quote_via=quote_plus, safe="")


def uuid_like(rng):
    h = "%032x" % rng.getrandbits(128)
    u = "-".join([h[:8], h[8:12], h[12:16], h[16:20], h[20:]])
    return rng.choice([u, u.upper(), h, h.upper()])


def vector(rng, i):
    key = uuid_like(rng)
    now = 1767225600 + rng.randrange(0, 10**8)
    path = PATHS[i % len(PATHS)]
    n = rng.randrange(1, 9)
    names = rng.sample(KEYS, n)
    pairs = [(k, rng.choice(VALUES)) for k in names]
    exp = str(now + 60)
    out_pairs = pairs + [("exp", exp)]
    get_msg = path + "?" + rfc3986(out_pairs)
    post_msg = rfc3986(out_pairs)
    cb = form(pairs)
    variants = {"form": cb}
    if any("~" in k + v for k, v in pairs):
        variants["form-php"] = cb.replace("~", "%7E")
        variants["form-whatwg"] = cb.replace("~", "%7E").replace("%2A", "*")
    elif any("*" in k + v for k, v in pairs):
        variants["form-whatwg"] = cb.replace("%2A", "*")
    if any(" " in k + v for k, v in pairs):
        variants["rfc3986"] = rfc3986(pairs)
    return {
        "key": key,
        "now": now,
        "params": pairs,
        "get": {
            "url": HOST + path + "?" + urlencode(pairs, quote_via=quote, safe=""),
            "message": get_msg,
            "signed": HOST + get_msg + "&signature=" + sign(key, get_msg),
        },
        "post": {"message": post_msg, "signature": sign(key, post_msg)},
        "post_with_path": {
            "path": path,
            "message": path + "?" + post_msg,
            "signature": sign(key, path + "?" + post_msg),
        },
        "callback": [
            {"encoding": enc, "message": m, "signature": sign(key, m)}
            for enc, m in variants.items()
        ],
    }


def main():
    rng = random.Random(20261122)
    vectors = [vector(rng, i) for i in range(240)]
    json.dump(vectors, sys.stdout, indent=1, ensure_ascii=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
