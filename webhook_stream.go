package paygate

import (
	"errors"
	"fmt"
	"io"
)

// ValidateBatchReader is ValidateBatchJSON for a body read from r, a window
// at a time: it keeps in memory about two windows of the input, the
// ordernos seen (for the rule that they are unique) and the problems found,
// never the transactions, so a 500 MB file is checked in a few tens of
// megabytes. It reports exactly the problems ValidateBatchJSON reports for
// the same bytes, in the same *ValidationError, and returns the number of
// transactions read. An error reading r is returned as it is (not a
// *ValidationError). It checks the document's agency codes;
// WebhookValidator.ValidateBatchReader checks others.
func ValidateBatchReader(r io.Reader) (int, error) {
	return validateStream(r, windowChunk, WebhookValidator{})
}

// validateStream is ValidateBatchReader with windows of about chunk bytes
// (tests use tiny ones, to put window ends everywhere) and the agency codes
// of rules.
func validateStream(r io.Reader, chunk int, rules WebhookValidator) (int, error) {
	src := &windowReader{r: r, chunk: chunk}
	p := &jsonScanner{src: src}
	var v ValidationError
	_, count := decodeBatch(p, &v, false, rules)
	if p.err == nil && p.peek() != 0 {
		p.fail("data after the top-level value")
	}
	if src.err != nil {
		return count, fmt.Errorf("paygate: reading the batch: %w", src.err)
	}
	if p.err != nil {
		v.Problems = append(v.Problems[:0], newFieldError("", ruleJSON+": "+p.err.Error(), ""))
		return 0, &v
	}
	return count, v.err()
}

// windowChunk is how much windowReader reads at a time.
const windowChunk = 256 << 10

// windowReader hands a jsonScanner its input in windows that each end just
// before a comma outside a string (or at the end of the input). Every
// comma of JSON text is read by the scanner right after a peek between two
// tokens, so no token ever spans two windows and the scanner moves to the
// next window only in peek.
type windowReader struct {
	r       io.Reader
	chunk   int    // bytes read at a time
	buf     []byte // read, not yet handed out
	scanned int    // buf[:scanned] has been looked through for commas
	inStr   bool   // scanning state at buf[scanned]: inside a string
	esc     bool   // and right after a backslash in it
	cut     int    // the last comma outside a string in buf[:scanned], or 0
	eof     bool
	err     error // a read error other than io.EOF
}

// next returns the next window, or false at the end of the input.
func (w *windowReader) next() (string, bool) {
	for {
		w.scan()
		if w.cut > 0 {
			win := string(w.buf[:w.cut])
			rest := copy(w.buf, w.buf[w.cut:])
			w.buf, w.scanned, w.cut = w.buf[:rest], 0, 0
			w.inStr, w.esc = false, false
			return win, true
		}
		if w.eof {
			if len(w.buf) == 0 {
				return "", false
			}
			win := string(w.buf)
			w.buf = w.buf[:0]
			return win, true
		}
		w.fill()
	}
}

// scan looks through the unscanned bytes for commas outside strings; a
// comma at 0 (where the last window ended) is not a cut.
func (w *windowReader) scan() {
	inStr, esc := w.inStr, w.esc
	for i := w.scanned; i < len(w.buf); i++ {
		c := w.buf[i]
		switch {
		case esc:
			esc = false
		case inStr:
			switch c {
			case '\\':
				esc = true
			case '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ',' && i > 0:
			w.cut = i
		}
	}
	w.scanned, w.inStr, w.esc = len(w.buf), inStr, esc
}

// fill reads up to one more chunk.
func (w *windowReader) fill() {
	if cap(w.buf)-len(w.buf) < w.chunk { // a window longer than a chunk: grow geometrically
		grown := make([]byte, len(w.buf), max(len(w.buf)+w.chunk, 2*cap(w.buf)))
		copy(grown, w.buf)
		w.buf = grown
	}
	n, err := io.ReadFull(w.r, w.buf[len(w.buf):cap(w.buf)][:w.chunk])
	w.buf = w.buf[:len(w.buf)+n]
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		w.eof = true
	case err != nil:
		w.eof, w.err = true, err
	}
}
