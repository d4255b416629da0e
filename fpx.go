package paygate

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// FPXCode is an `fpx_debit_auth_code` from the `fpx` JSON of a callback
// (docs/protocol.md A2). Codes are strings such as "00", "1C" or "XA", never integers.
type FPXCode string

// Status maps the code to a payment status per the table of docs/protocol.md A2:
// "00" is success; empty, "09", "76" and "99" are pending; every other code is
// failed.
func (c FPXCode) Status() Status {
	switch c {
	case "00":
		return StatusSuccess
	case "", "09", "76", "99":
		return StatusPending
	}
	return StatusFailed
}

// Reason returns the meaning of the code from the public FPX response-code
// table (fpx_codes.tsv), for messages only (act on Status, not on the
// text), or "" for a code the table does not list.
func (c FPXCode) Reason() string {
	return fpxReasons()[c]
}

// fpxCodesTSV is the public FPX response-code table: lines starting with #
// that name its source, a header line, then one code and its meaning per
// line, separated by a tab.
//
//go:embed fpx_codes.tsv
var fpxCodesTSV string

// fpxReasons is the table read once, on first use, into a map that nothing
// writes after: a sync.OnceValue, so no package state changes after it is
// built. The table is part of the binary; a test (TestFPXCodesTable) proves
// it parses, so the panic cannot fire in a build whose tests pass.
var fpxReasons = sync.OnceValue(func() map[FPXCode]string {
	m, err := parseFPXCodes(fpxCodesTSV)
	if err != nil {
		panic("paygate: the embedded fpx_codes.tsv: " + err.Error())
	}
	return m
})

// parseFPXCodes reads the table: comment lines starting with # (the
// source), then the header line "code\tmeaning", then every line a code and
// its meaning; an empty field, a repeated code or a line without a tab is
// an error naming the line. Lines end in LF or CRLF (a checkout by Git for
// Windows' core.autocrlf embeds CRLF).
func parseFPXCodes(tsv string) (map[FPXCode]string, error) {
	tsv = strings.ReplaceAll(tsv, "\r\n", "\n")
	lines := strings.Split(strings.TrimSuffix(tsv, "\n"), "\n")
	head := 0 // the header's index, after the comments
	for head < len(lines)-1 && strings.HasPrefix(lines[head], "#") {
		head++
	}
	if lines[head] != "code\tmeaning" {
		return nil, fmt.Errorf("line %d: header %q, want \"code\\tmeaning\"", head+1, lines[head])
	}
	m := make(map[FPXCode]string, len(lines)-head-1)
	for i, line := range lines[head+1:] {
		code, meaning, ok := strings.Cut(line, "\t")
		if _, dup := m[FPXCode(code)]; !ok || code == "" || meaning == "" || dup {
			return nil, fmt.Errorf("line %d: %q: want a new code, a tab and its meaning", head+i+2, line)
		}
		m[FPXCode(code)] = meaning
	}
	return m, nil
}

// Describe returns the code followed by its reason, "51 (Insufficient
// Funds)", or the bare code when the table does not list it. (FPXCode has no
// String method on purpose: formatted with %s or %q it is the code itself,
// as the wire carries it.)
func (c FPXCode) Describe() string {
	if r := c.Reason(); r != "" {
		return string(c) + " (" + r + ")"
	}
	return string(c)
}
