//go:build !purego

package paygate

// escapeVectors is what escapeBlocks (escape_amd64.s) needs to escape 16
// bytes at a time under one encoding with SSSE3, built from escapeWords so
// that both ways write the same bytes. Its layout is read by offset in the
// assembly.
type escapeVectors struct {
	// lutLo[c&15] & lutHi[c>>4] is non-zero when c is kept as it is: a
	// bitmap of the kept ASCII bytes, bit c>>4 of entry c&15.
	lutLo, lutHi [16]byte
	hex          [16]byte // "0123456789ABCDEF"
	nibble       [16]byte // 0x0f in every byte
	percent      [16]byte // '%' in every byte
	space        [16]byte // ' ' in every byte
	spaceToPlus  [16]byte // ' '^'+' in every byte under a form encoding, else 0
	formMask     uint64   // 0xffff under a form encoding (a space is not escaped), else 0
	_            uint64
	// shuffles[m] picks, from four bytes laid out as b % H L each, b for
	// a byte whose bit in m is clear and % H L for one whose bit is set,
	// at most 12 bytes; its last byte is how many (the byte it picks
	// lands past them).
	shuffles [16][16]byte
}

// escapeVectorTables holds one escapeVectors per queryEncoding. The tables
// are read-only after package initialisation.
var escapeVectorTables = func() (t [4]escapeVectors) {
	for e := range t {
		v := &t[e]
		for c := 0; c < 0x80; c++ {
			if escapeWords[e][c] == uint32(c)|1<<24 {
				v.lutLo[c&15] |= 1 << (c >> 4)
			}
		}
		for i := range 16 {
			if i < 8 {
				v.lutHi[i] = 1 << i
			}
			v.hex[i] = "0123456789ABCDEF"[i]
			v.nibble[i], v.percent[i], v.space[i] = 0x0f, '%', ' '
		}
		if escapeWords[e][' '] == '+'|1<<24 {
			v.formMask = 0xffff
			for i := range v.spaceToPlus {
				v.spaceToPlus[i] = ' ' ^ '+'
			}
		}
		for m := range v.shuffles {
			s := &v.shuffles[m]
			for i := range s {
				s[i] = 0x80 // zero: past the bytes kept
			}
			n := 0
			for b := range 4 {
				if m&(1<<b) == 0 {
					s[n] = byte(4 * b)
					n++
					continue
				}
				s[n], s[n+1], s[n+2] = byte(4*b+1), byte(4*b+2), byte(4*b+3)
				n += 3
			}
			s[15] = byte(n)
		}
	}
	return t
}()

// haveSSSE3 reports whether the CPU runs escapeBlocks (CPUID leaf 1, ECX
// bit 9). Read-only after package initialisation.
var haveSSSE3 = cpuidECX1()&(1<<9) != 0

// cpuidECX1 returns ECX of CPUID leaf 1, the feature bits.
func cpuidECX1() uint32

// escapeBlocks escapes the whole 16-byte blocks of src into dst with the
// tables of one encoding and returns the bytes written (escape_amd64.s).
//
//go:noescape
func escapeBlocks(dst []byte, src string, t *escapeVectors) int

// escapeVector escapes the leading whole 16-byte blocks of s into dst
// under e, as appendEscaped does, when the CPU has SSSE3, and returns the
// bytes written and read. dst must have room for 3*len(s)+16 bytes.
func escapeVector(dst []byte, s string, e queryEncoding) (written, read int) {
	if !haveSSSE3 || len(s) < 16 || cap(dst) < 3*len(s)+16 {
		return 0, 0
	}
	return escapeBlocks(dst[:cap(dst)], s, &escapeVectorTables[e]), len(s) &^ 15
}
