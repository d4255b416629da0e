package signing

import "fmt"

// parseUUID decodes the 32 hex digits of a UUID, with its dashes at the
// places a UUID has them or with none.
func parseUUID(uuid string) ([16]byte, error) {
	var raw [16]byte
	n := 0 // hex digits seen
	for i := 0; i < len(uuid); i++ {
		c := uuid[i]
		if c == '-' {
			if n != 8 && n != 12 && n != 16 && n != 20 || i > 0 && uuid[i-1] == '-' {
				return raw, fmt.Errorf("%w: dash at position %d is not where a UUID has one", ErrInvalidKey, i+1)
			}
			continue
		}
		v, ok := hexValue(c)
		if !ok {
			return raw, fmt.Errorf("%w: non-hex character at position %d", ErrInvalidKey, i+1)
		}
		if n == 32 {
			return raw, fmt.Errorf("%w: more than 32 hex digits", ErrInvalidKey)
		}
		raw[n/2] |= v << (4 * (1 - n%2))
		n++
	}
	if n != 32 {
		return raw, fmt.Errorf("%w: %d hex digits, want 32", ErrInvalidKey, n)
	}
	if l := len(uuid); l != 32 && l != 36 {
		return raw, fmt.Errorf("%w: %d characters, want 32 (no dashes) or 36 (UUID)", ErrInvalidKey, l)
	}
	return raw, nil
}

// hexValue decodes one hex digit of either case.
func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
