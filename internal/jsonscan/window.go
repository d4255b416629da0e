package jsonscan

import (
	"errors"
	"io"
	"math"
)

// Chunk is how much a stream's Scanner reads at a time.
const Chunk = 256 << 10

// minTokenKeep is the least windowReader keeps of a token before it may end
// a window inside it: more than the longest literal (false), so that
// literal, which does not read across windows, always sees a whole one.
const minTokenKeep = 8

// tokenKeep is how much of a token a stream keeps before a window may end
// inside it: more than the value cap, so that only a token too long to
// keep is cut, and at least minTokenKeep. It saturates, so that a cap of
// math.MaxInt (no cap) does not wrap to a keep of minTokenKeep, which cut
// valid values in two.
func tokenKeep(maxValue int) int {
	return max(min(maxValue, math.MaxInt-1)+1, minTokenKeep)
}

// windowReader hands a stream's Scanner its input in windows. A window ends
// between two tokens (before or after white space or a structural
// character, or after a string), where the scanner always peeks and so
// moves on to the next window; or, past the first keep bytes of a string or
// of a run of other token bytes, inside the token, where Str and Number
// read on into the next window (never inside an escape, whose bytes the
// scanner reads at once). No token ever makes a window longer than keep
// bytes plus a chunk, so memory stays about two windows whatever the bytes:
// a string of 300 MB is read through, never held.
type windowReader struct {
	r       io.Reader
	chunk   int    // bytes read at a time
	keep    int    // a token is never cut before its first keep bytes
	buf     []byte // read, not yet handed out
	spare   []byte // the array of the window last handed out, which the next call reuses
	scanned int    // buf[:scanned] has been looked through for cuts
	lex     lexPos // the lexical position at buf[scanned]
	cut     int    // the last place a window may end in buf[:scanned], or 0
	cutLex  lexPos // the lexical position at cut
	eof     bool
	err     error // a read error other than io.EOF
}

// lexPos is where windowReader's scan is in the JSON text.
type lexPos struct {
	in    lexToken
	start int // where the token started in buf; negative once it was cut
	esc   int // in a string: bytes of an escape still to come (-1: the letter after the backslash)
}

// lexToken is the kind of token a lexPos is inside.
type lexToken uint8

const (
	lexBetween lexToken = iota // between tokens
	lexString                  // in a string, after its opening quote
	lexBare                    // in a number or literal, or a run of other bytes
)

// delimiter marks white space and the structural characters, which end a
// bare token. Read-only after package initialisation.
var delimiter = func() (t [256]bool) {
	for _, c := range " \t\r\n,:[]{}" {
		t[c] = true
	}
	return t
}()

// next returns the next window, whether it ends inside a token, and false at
// the end of the input. A window is valid until the next call, which reuses
// its array for what follows it: two arrays in turn, no copy of the input
// per window (a Scanner's views are valid until its next call, and a
// key it hands out from a stream is its own copy).
func (w *windowReader) next() ([]byte, bool, bool) {
	for {
		w.scan()
		if w.cut > 0 {
			win := w.buf[:w.cut]
			w.buf, w.spare = append(w.spare[:0], w.buf[w.cut:]...), w.buf[:0]
			w.scanned, w.cut = 0, 0
			w.lex = w.cutLex
			if w.lex.in != lexBetween {
				w.lex.start = -w.keep // already cut: any clean place is a cut
			}
			return win, w.lex.in != lexBetween, true
		}
		if w.eof {
			if len(w.buf) == 0 {
				return nil, false, false
			}
			win := w.buf
			w.buf, w.spare = w.spare[:0], w.buf[:0]
			return win, false, true
		}
		w.fill()
	}
}

// scan looks through the unscanned bytes for the places a window may end;
// a place at 0 (where the last window ended) is not one.
func (w *windowReader) scan() {
	for i := w.scanned; i < len(w.buf); i++ {
		switch w.lex.in {
		case lexString:
			i = w.inString(i)
		case lexBare:
			if !w.inBare(i) {
				w.between(i)
			}
		default:
			w.between(i)
		}
	}
	w.scanned = len(w.buf)
}

// inString scans buf[i] inside a string, or the run of plain bytes it
// starts, at once, and returns the index of the last byte it scanned. A
// window may end inside the run or after an escape past the string's first
// keep bytes, never inside an escape.
func (w *windowReader) inString(i int) int {
	l := &w.lex
	switch c := w.buf[i]; {
	case l.esc < 0: // the letter after the backslash
		l.esc = 0
		if c == 'u' {
			l.esc = 4
		}
		w.escapeEnd(i)
	case l.esc > 0:
		l.esc--
		w.escapeEnd(i)
	case c == '\\':
		l.esc = -1
	case c == '"':
		l.in = lexBetween
	default:
		j := i + 1
		for j < len(w.buf) && w.buf[j] != '"' && w.buf[j] != '\\' {
			j++
		}
		if j-1-l.start > w.keep {
			w.cut, w.cutLex = j-1, *l
		}
		return j - 1
	}
	return i
}

// escapeEnd notes, when buf[i] ends an escape past the string's first keep
// bytes, that a window may end after it: a string of escapes alone has no
// plain run to end one in.
func (w *windowReader) escapeEnd(i int) {
	if l := &w.lex; l.esc == 0 && i+1-l.start > w.keep {
		w.cut, w.cutLex = i+1, *l
	}
}

// inBare scans buf[i] inside a number, literal or run of other bytes, where
// a window may end past the token's first keep bytes; false when buf[i]
// ends the token.
func (w *windowReader) inBare(i int) bool {
	if c := w.buf[i]; delimiter[c] || c == '"' {
		w.lex.in = lexBetween
		return false
	}
	if i-w.lex.start >= w.keep {
		w.cut, w.cutLex = i, w.lex
	}
	return true
}

// between scans buf[i] between tokens: a window may end before it.
func (w *windowReader) between(i int) {
	if i > 0 {
		w.cut, w.cutLex.in = i, lexBetween
	}
	switch c := w.buf[i]; {
	case c == '"':
		w.lex = lexPos{in: lexString, start: i}
	case !delimiter[c]:
		w.lex = lexPos{in: lexBare, start: i}
	}
}

// fill reads up to one more chunk. Only io.EOF ends the input cleanly: not
// io.ReadFull, whose io.ErrUnexpectedEOF for a short last chunk cannot be
// told from the reader's own (a body cut short, as net/http reports it).
func (w *windowReader) fill() {
	if cap(w.buf)-len(w.buf) < w.chunk { // a window longer than a chunk: grow geometrically
		grown := make([]byte, len(w.buf), max(len(w.buf)+w.chunk, 2*cap(w.buf)))
		copy(grown, w.buf)
		w.buf = grown
	}
	room := w.buf[len(w.buf):cap(w.buf)][:w.chunk]
	n := 0
	for n < len(room) && !w.eof {
		m, err := w.r.Read(room[n:])
		n += m
		switch {
		case errors.Is(err, io.EOF):
			w.eof = true
		case err != nil:
			w.eof, w.err = true, err
		}
	}
	w.buf = w.buf[:len(w.buf)+n]
}
