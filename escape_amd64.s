//go:build !purego

#include "textflag.h"

// func cpuidECX1() uint32
TEXT ·cpuidECX1(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET

// func escapeFields(dst []byte, base int, fields []field, ends []int, t *escapeVectors, pairs bool, plain uint64) int
//
// With pairs, writes key=value&key=value... for fields into dst, each key
// and value escaped, and ends[i] = base + the bytes written up to the end
// of fields[i]; without, writes fields[0].value escaped and nothing else.
// The key of a field whose bit is set in plain (bit i for fields[i]) is
// copied as it is: every encoding keeps its bytes.
// Returns the bytes written, or -1 when t is rawVectors and the value needs
// the exact way. dst must have room for three bytes a byte of
// the strings, two a field, and 64 (see appendFieldsVector).
//
// A string goes 16 bytes a step: a block of bytes all kept is stored as it
// is; otherwise each four bytes are laid out as b % H L and a shuffle picks
// what each makes. The last block of fewer than 16 bytes is loaded whole
// when the 16 bytes lie in one page (the page holds the string's byte, so
// it is mapped), its extra bytes counted as kept and the bytes they make
// dropped again; at the end of a page it goes a byte at a time through
// escapeWords.
TEXT ·escapeFields(SB), NOSPLIT, $32-112
	MOVQ dst_base+0(FP), DI
	MOVQ DI, R9
	SUBQ base+24(FP), R9 // DI - R9 = base + bytes written
	MOVQ fields_base+32(FP), R8
	MOVQ fields_len+40(FP), AX
	MOVQ AX, cnt-8(SP)
	MOVQ ends_base+56(FP), AX
	MOVQ AX, endp-16(SP)
	MOVQ plain+96(FP), AX
	MOVQ AX, plain-32(SP)
	MOVQ t+80(FP), AX
	MOVOU 0(AX), X8    // lutLo
	MOVOU 16(AX), X9   // lutHi
	MOVOU 32(AX), X10  // hex digits
	MOVOU 48(AX), X11  // 0x0f in every byte
	MOVOU 64(AX), X12  // '%' in every byte
	MOVOU 80(AX), X13  // ' ' in every byte
	MOVOU 96(AX), X14  // ' '^'+' in every byte (form encodings), or 0
	MOVQ 112(AX), R12  // 0xffff (form encodings), or 0
	LEAQ 128(AX), R10  // shuffles[16][16], then words
	PXOR X15, X15
	CMPQ cnt-8(SP), $0
	JEQ fin
	MOVBQZX pairs+88(FP), AX
	TESTQ AX, AX
	JNZ first
	MOVQ $2, phase-24(SP) // the value alone
	MOVQ 16(R8), SI
	MOVQ 24(R8), CX
	JMP next_block

field:
	MOVB $0x26, (DI) // '&'
	INCQ DI
first:
	MOVQ $0, phase-24(SP)
	MOVQ 0(R8), SI
	MOVQ 8(R8), CX
	MOVQ plain-32(SP), AX
	SHRQ $1, plain-32(SP)
	TESTQ $1, AX
	JNZ copy

next_block:
	CMPQ CX, $16
	JGE full
	CMPQ CX, $0
	JLE str_done
	MOVQ SI, AX
	ANDQ $4095, AX
	CMPQ AX, $4080
	JA tail
	MOVQ $16, R11      // bytes loaded past the string
	SUBQ CX, R11
	MOVQ $1, R13
	SHLQ CX, R13
	DECQ R13           // the string's bytes of the block
	JMP block

full:
	XORQ R11, R11
	MOVQ $0xffff, R13

block:
	MOVOU (SI), X0
	MOVOU X0, X4
	PCMPEQB X13, X4    // 0xff at a byte to substitute (see escapeVectors)
	PMOVMSKB X4, DX
	PAND X14, X4
	PXOR X4, X0        // substituted
	ANDQ R12, DX
	NOTQ DX            // the substituted bytes a form encoding keeps
	MOVOU X0, X1
	PAND X11, X1       // low nibbles
	MOVOU X0, X2
	PSRLW $4, X2
	PAND X11, X2       // high nibbles
	MOVOU X8, X3
	PSHUFB X1, X3
	MOVOU X9, X4
	PSHUFB X2, X4
	PAND X4, X3
	PCMPEQB X15, X3    // 0xff where the byte is not kept as it is
	PMOVMSKB X3, BX
	ANDQ DX, BX
	ANDQ R13, BX       // bit i: byte i becomes %XX
	CMPQ 264(R10), $0
	JNE raw
stored:
	TESTQ BX, BX
	JNZ escape
	MOVOU X0, (DI)
	ADDQ $16, DI
	JMP after

escape:
	MOVOU X10, X5
	PSHUFB X2, X5      // high hex digits
	MOVOU X10, X6
	PSHUFB X1, X6      // low hex digits
	MOVOU X0, X1
	PUNPCKLBW X12, X1  // b0 % b1 % ... b7 %
	MOVOU X0, X2
	PUNPCKHBW X12, X2  // b8 % ... b15 %
	MOVOU X5, X3
	PUNPCKLBW X6, X3   // h0 l0 ... h7 l7
	PUNPCKHBW X6, X5   // h8 l8 ... h15 l15
	MOVOU X1, X0
	PUNPCKLWL X3, X0   // b0 % h0 l0 ... b3 % h3 l3
	PUNPCKHWL X3, X1   // bytes 4-7
	MOVOU X2, X4
	PUNPCKLWL X5, X4   // bytes 8-11
	PUNPCKHWL X5, X2   // bytes 12-15

	// Four bytes at a time: AX = their bits of BX times 16, the offset of
	// their shuffle, whose last byte is how many bytes they make.
	MOVQ BX, AX
	SHLQ $4, AX
	ANDQ $0xf0, AX
	MOVOU (R10)(AX*1), X6
	PSHUFB X6, X0
	MOVOU X0, (DI)
	MOVBQZX 15(R10)(AX*1), AX
	ADDQ AX, DI

	MOVQ BX, AX
	ANDQ $0xf0, AX
	MOVOU (R10)(AX*1), X6
	PSHUFB X6, X1
	MOVOU X1, (DI)
	MOVBQZX 15(R10)(AX*1), AX
	ADDQ AX, DI

	MOVQ BX, AX
	SHRQ $4, AX
	ANDQ $0xf0, AX
	MOVOU (R10)(AX*1), X6
	PSHUFB X6, X4
	MOVOU X4, (DI)
	MOVBQZX 15(R10)(AX*1), AX
	ADDQ AX, DI

	MOVQ BX, AX
	SHRQ $8, AX
	ANDQ $0xf0, AX
	MOVOU (R10)(AX*1), X6
	PSHUFB X6, X2
	MOVOU X2, (DI)
	MOVBQZX 15(R10)(AX*1), AX
	ADDQ AX, DI

after:
	SUBQ R11, DI       // drop what the bytes past the string made
	ADDQ $16, SI
	SUBQ $16, CX
	JMP next_block

// A raw query value (rawVectors): a stop byte, or an escape that is cut
// short, not upper-case hex, or of a byte RFC 3986 keeps, leaves the value
// to the exact way (escapeFields returns -1).
raw:
	MOVOU 272(R10), X7 // 0x1f in every byte
	PMINUB X0, X7
	PCMPEQB X0, X7     // a control byte
	MOVOU 288(R10), X3 // 0x7f
	PCMPEQB X0, X3
	POR X3, X7
	MOVOU 304(R10), X3 // ';'
	PCMPEQB X0, X3
	POR X3, X7
	MOVOU 320(R10), X3 // '#'
	PCMPEQB X0, X3
	POR X3, X7
	PMOVMSKB X7, AX
	ANDQ R13, AX
	JNZ recheck
	MOVOU X12, X3
	PCMPEQB X0, X3     // '%'
	PMOVMSKB X3, AX
	ANDQ R13, AX
	JZ stored
pct:
	BSFQ AX, DX
	LEAQ 2(DX), R13
	CMPQ R13, CX
	JGE recheck        // fewer than two bytes after it
	MOVBQZX 1(SI)(DX*1), R13
	MOVBQZX 336(R10)(R13*1), R13
	CMPQ R13, $15
	JA recheck
	SHLQ $4, R13
	MOVBQZX 2(SI)(DX*1), DX
	MOVBQZX 336(R10)(DX*1), DX
	CMPQ DX, $15
	JA recheck
	ORQ DX, R13
	MOVBQZX 592(R10)(R13*1), DX
	TESTQ DX, DX
	JNZ recheck        // an escape of a byte RFC 3986 keeps
	LEAQ -1(AX), DX
	ANDQ DX, AX
	JNZ pct
	JMP stored

recheck:
	MOVQ $-1, ret+104(FP)
	RET

// A plain key: copied 16 bytes a step, the last short block whole when
// its 16 bytes lie in one page, else a byte at a time.
copy:
	CMPQ CX, $16
	JLT copy_tail
	MOVOU (SI), X0
	MOVOU X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JMP copy
copy_tail:
	TESTQ CX, CX
	JZ str_done
	MOVQ SI, AX
	ANDQ $4095, AX
	CMPQ AX, $4080
	JA copy_bytes
	MOVOU (SI), X0
	MOVOU X0, (DI)
	ADDQ CX, DI
	JMP str_done
copy_bytes:
	MOVB (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JNZ copy_bytes
	JMP str_done

tail:
	CMPQ 264(R10), $0
	JNE recheck
	MOVQ 256(R10), R13 // words
tail_loop:
	MOVBQZX (SI), AX
	MOVL (R13)(AX*4), AX
	MOVL AX, (DI)
	SHRL $24, AX
	ANDL $3, AX
	ADDQ AX, DI
	INCQ SI
	DECQ CX
	JNZ tail_loop

str_done:
	MOVQ phase-24(SP), AX
	CMPQ AX, $1
	JEQ value_done
	JGT fin
	MOVB $0x3d, (DI) // '='
	INCQ DI
	MOVQ $1, phase-24(SP)
	MOVQ 16(R8), SI
	MOVQ 24(R8), CX
	JMP next_block

value_done:
	MOVQ endp-16(SP), AX
	MOVQ DI, DX
	SUBQ R9, DX
	MOVQ DX, (AX)
	ADDQ $8, AX
	MOVQ AX, endp-16(SP)
	ADDQ $32, R8
	DECQ cnt-8(SP)
	JNZ field

fin:
	MOVQ DI, AX
	SUBQ dst_base+0(FP), AX
	MOVQ AX, ret+104(FP)
	RET

// func queryMarks(query string, marks []uint16, stride int, t *escapeVectors)
//
// For each whole 16-byte block k of query: marks[k] gets the bits of its
// '&' bytes, marks[stride+k] of its '=' bytes, and marks[2*stride+k] of
// its bytes that t does not keep.
TEXT ·queryMarks(SB), NOSPLIT, $0-56
	MOVQ query_base+0(FP), SI
	MOVQ query_len+8(FP), CX
	MOVQ marks_base+16(FP), DI
	MOVQ stride+40(FP), R8
	MOVQ t+48(FP), AX
	MOVOU 0(AX), X8    // lutLo
	MOVOU 16(AX), X9   // lutHi
	MOVOU 48(AX), X11  // 0x0f in every byte
	PXOR X15, X15
	MOVQ $0x2626262626262626, AX
	MOVQ AX, X12
	PUNPCKLQDQ X12, X12 // '&'
	MOVQ $0x3d3d3d3d3d3d3d3d, AX
	MOVQ AX, X13
	PUNPCKLQDQ X13, X13 // '='
	LEAQ (DI)(R8*2), R9  // the '=' marks
	LEAQ (R9)(R8*2), R10 // the others

marks:
	CMPQ CX, $16
	JLT marked
	MOVOU (SI), X0
	MOVOU X0, X1
	PCMPEQB X12, X1
	PMOVMSKB X1, AX
	MOVW AX, (DI)
	MOVOU X0, X1
	PCMPEQB X13, X1
	PMOVMSKB X1, AX
	MOVW AX, (R9)
	MOVOU X0, X1
	PAND X11, X1
	MOVOU X0, X2
	PSRLW $4, X2
	PAND X11, X2
	MOVOU X8, X3
	PSHUFB X1, X3
	MOVOU X9, X4
	PSHUFB X2, X4
	PAND X4, X3
	PCMPEQB X15, X3
	PMOVMSKB X3, AX
	MOVW AX, (R10)
	ADDQ $16, SI
	SUBQ $16, CX
	ADDQ $2, DI
	ADDQ $2, R9
	ADDQ $2, R10
	JMP marks

marked:
	RET
