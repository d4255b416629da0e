package paygate

import (
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The fast path takes the URLs merchants sign, and leaves to url.Parse and
// url.ParseQuery every one it does not read exactly as they do (whatever
// way a URL goes, FuzzSignReference checks the result against the
// reference implementation).
func TestSignURLFastPath(t *testing.T) {
	order := benchOrder()
	order.Set("name", "Siti Nur Aisyah 林美玲")
	order.Set("description", "Zakat fitrah 2026, paid online")
	for _, tt := range []struct {
		raw  string
		fast bool
	}{
		{raw: "https://gw.example.my/v2/pay?" + order.Encode(), fast: true},
		{raw: "https://gw.example.my:8443/a/b~c?b=2&a=1&exp=9&signature=x", fast: true},
		{raw: "https://gw.example.my", fast: true},
		{raw: "https://gw.example.my?x=%e6%9e+", fast: true},
		{raw: "HTTPS://gw.example.my/", fast: false},      // url.Parse lower-cases the scheme
		{raw: "https://user@gw.example.my/", fast: false}, // refused by the general way
		{raw: "https://gw.example.my/a%20b", fast: false}, // an escaped path
		{raw: "https://gw.example.my/p#f", fast: false},
		{raw: "https://[::1]/p", fast: false},
		{raw: "https://gw.example.my/p?a=1&a=2", fast: false}, // several values: an error
		{raw: "https://gw.example.my/p?a=%zz", fast: false},
		{raw: "https://gw.example.my/p?a;b=1", fast: false},
		{raw: "https://gw.example.my/p?%61=1", fast: false},
		{raw: "https://gw.example.my/p?a=b=c", fast: false},
		{raw: "https://gw.example.my/p?" + strings.Repeat("&", maxScanFields), fast: false},
		{raw: "https://gw.example.my/p?" + strings.Repeat("exp=1&", maxScanFields), fast: false},
	} {
		var s signState
		origin, _, query, ok := simpleURL(tt.raw)
		require.Equal(t, tt.fast, ok && s.scanQuery(query), tt.raw)
		if tt.fast {
			u, err := url.Parse(tt.raw)
			require.NoError(t, err)
			require.Equal(t, u.Scheme+"://"+u.Host, origin)
		}
	}
}

// A query of more pairs than url.ParseQuery reads, empty ones and exp or
// signature included, is refused as it refuses it.
func TestSignURLTooManyPairs(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Unix(1_800_000_000, 0)
	for _, pair := range []string{"", "exp=1", "signature=x", "a=1"} {
		raw := "https://gw.example.my/p?" + strings.Repeat(pair+"&", 10_001)
		_, err := SignURL(key, raw, now)
		require.Error(t, err, "%q x 10,001", pair)
		_, perr := url.ParseQuery(raw[strings.IndexByte(raw, '?')+1:])
		require.Error(t, perr)
	}
}

func TestSignURLEmptyPathAndPlus(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	msg, err := URLMessage("https://gw.example?q=a+b", now)
	require.NoError(t, err)
	require.Equal(t, "/?exp=1800000060&q=a%20b", msg.Message)
}

// A query whose keys come sorted is written in one pass, exactly as the
// general way (url.ParseQuery, collect, appendQuery) writes it; anything
// else is left to scanQuery and the general way.
func TestSignURLSortedPath(t *testing.T) {
	const exp = "1800000060"
	for _, tt := range []struct {
		query string
		taken bool
	}{
		{query: benchOrder().Encode(), taken: true},
		{query: "", taken: true},
		{query: "a=1&b=2&z=3", taken: true},
		{query: "a=1&b=2&z=3&", taken: true}, // an empty pair last
		{query: "a=1&&b=2", taken: true},     // and between
		{query: "aa=" + strings.Repeat("x", 13) + "&b=2&exp=1&zz=" + strings.Repeat("%E6", 9), taken: true}, // '&' and '=' across blocks
		{query: "ab=1&b=2=3&c", taken: true},
		{query: "a=1&exp=5&signature=x&z=3", taken: true},
		{query: "=v&a&b=", taken: true},
		{query: "a=b=c&b=%41%e6%9E&c=%2a+~&d=!*'()%20", taken: true},
		{query: "a=%C3%A9+%7e&b=%2A%2a%41%41%41%41%41%41%41%41", taken: true},
		{query: "b=1&a=2", taken: false},         // out of order: scanQuery sorts
		{query: "a=1&a=2", taken: false},         // several values
		{query: "a%41=1", taken: false},          // an escape in a key
		{query: "a+b=1", taken: false},           // a space in a key
		{query: "a=1;b=2", taken: false},         // url.ParseQuery refuses ;
		{query: "a=%zz", taken: false},           // an invalid escape
		{query: "a=%4", taken: false},            // a short one
		{query: "a=12345678%4", taken: false},    // a short one after a window
		{query: "a=1234567%4&b=1", taken: false}, // one cut by the pair's end
		{query: "a=1&exp=%", taken: false},       // one in a replaced pair
		{query: "a=\x01", taken: false},          // a control byte
		{query: strings.Repeat("&", maxScanFields), taken: false},
	} {
		t.Run(tt.query, func(t *testing.T) {
			got, ok := appendSortedQuery(nil, tt.query, exp)
			require.Equal(t, tt.taken, ok)
			// The vector path takes a part of what the one-pass way
			// takes, and writes the same.
			var vs signState
			if vgot, vok := vs.appendSortedQueryVector([]byte("p?"), tt.query, exp); vok {
				require.True(t, ok, "the vector path took a query the one-pass way refuses")
				require.Equal(t, "p?"+string(got), string(vgot))
			}
			if !ok {
				return
			}
			q, err := url.ParseQuery(tt.query)
			require.NoError(t, err)
			var s signState
			require.NoError(t, s.collect(q, exp, false))
			require.Equal(t, string(s.appendQuery(nil, encRFC3986)), string(got))
		})
	}
}

// Hostile URLs sign exactly as the reference (url.Parse, url.ParseQuery,
// sort, RFC 3986) signs them, or fail where it fails: fragments, bad and
// odd escapes, +, ;, empty keys and values, repeated and near-repeated
// keys, exp and signature anywhere, unicode and raw high bytes, control
// bytes, a sorted run broken at its last pair, ports, IPv6, userinfo,
// opaque URLs, and very long queries.
func TestSignURLHostileMatchesReference(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rawKey, err := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	long := strings.Repeat("v", 70_000)
	for _, raw := range []string{
		"https://gw.example.my/p?a=1#",
		"https://gw.example.my/p?a=1#frag",
		"https://gw.example.my/p#?a=1",
		"https://gw.example.my/p?a=%",
		"https://gw.example.my/p?a=%4",
		"https://gw.example.my/p?a=%zz",
		"https://gw.example.my/p?a=%4G",
		"https://gw.example.my/p?a=%41%42&b=%e6%9E%97",
		"https://gw.example.my/p?a=%2B+%20+",
		"https://gw.example.my/p?a=+&b=++&c=%2b",
		"https://gw.example.my/p?a=1;b=2",
		"https://gw.example.my/p?;",
		"https://gw.example.my/p?=",
		"https://gw.example.my/p?=1",
		"https://gw.example.my/p?a",
		"https://gw.example.my/p?a=",
		"https://gw.example.my/p?a&a=",
		"https://gw.example.my/p?a=1&a=1",
		"https://gw.example.my/p?a=1&A=1&a%20=1&a+=2",
		"https://gw.example.my/p?exp=1",
		"https://gw.example.my/p?exp=1&exp=2",
		"https://gw.example.my/p?exp=%zz",
		"https://gw.example.my/p?signature=a&signature=b&z=1",
		"https://gw.example.my/p?z=1&signature=&exp=&a=2",
		"https://gw.example.my/p?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&a=9",
		"https://gw.example.my/p?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&b=9",
		"https://gw.example.my/p?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&0=9",
		"https://gw.example.my/p?b=1&a=2",
		"https://gw.example.my/p?ab=1&a=2&a%62=3",
		"https://gw.example.my/p?k=林美玲&林=1",
		"https://gw.example.my/p?k=\xff\xfe&\xff=1",
		"https://gw.example.my/p?k=a\x00b",
		"https://gw.example.my/p?k=a\x7fb&t=\t",
		"https://gw.example.my/p?k=a b",
		"https://gw.example.my/p?k=~*'()!$,/:@?",
		"https://gw.example.my/p?&&&a=1&&&",
		"https://gw.example.my/p?",
		"https://gw.example.my?",
		"https://gw.example.my/p/?a=1",
		"https://gw.example.my/a%2Fb/%7e?a=1",
		"https://gw.example.my/a b?a=1",
		"https://gw.example.my/林?a=1",
		"https://gw.example.my:0/p?a=1",
		"https://gw.example.my:99999/p?a=1",
		"https://gw.example.my:/p?a=1",
		"https://GW.Example.MY/p?a=1",
		"https://[::1]:8443/p?a=1",
		"https://[::1/p?a=1",
		"https://u:p@gw.example.my/p?a=1",
		"https://@gw.example.my/p?a=1",
		"https:gw.example.my/p?a=1",
		"https:///p?a=1",
		"//gw.example.my/p?a=1",
		"gw.example.my/p?a=1",
		"",
		"?",
		"https://gw.example.my/p?a=" + long,
		"https://gw.example.my/p?" + strings.Repeat("k=v&", 9_998) + "k=w",
		"https://gw.example.my/p?" + strings.Repeat("&", 9_999) + "a=1",
		"https://gw.example.my/p?" + strings.Repeat("&", 10_000) + "a=1",
	} {
		got, err := SignURL(key, raw, now)
		want, refErr := refSignURL(rawKey, raw, now)
		require.Equal(t, refErr == nil, err == nil, "%.200q: SignURL error %v, reference %v", raw, err, refErr)
		require.Equal(t, want, got, "%.200q", raw)
	}
}
