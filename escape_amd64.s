//go:build !purego

#include "textflag.h"

// func cpuidECX1() uint32
TEXT ·cpuidECX1(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET

// func escapeBlocks(dst []byte, src string, t *escapeVectors) int
//
// Escapes src 16 bytes at a time into dst (see escapeVectors) and returns
// the number of bytes written. It reads len(src)&^15 bytes of src; dst must
// have room for three bytes a byte read plus 16.
TEXT ·escapeBlocks(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ t+40(FP), R8
	MOVQ DI, R9
	MOVOU 0(R8), X8    // lutLo
	MOVOU 16(R8), X9   // lutHi
	MOVOU 32(R8), X10  // hex digits
	MOVOU 48(R8), X11  // 0x0f in every byte
	MOVOU 64(R8), X12  // '%' in every byte
	MOVOU 80(R8), X13  // ' ' in every byte
	MOVOU 96(R8), X14  // ' '^'+' in every byte (form encodings), or 0
	MOVQ 112(R8), R12  // 0xffff (form encodings), or 0
	LEAQ 128(R8), R10  // shuffles[16][16]
	PXOR X15, X15

loop:
	CMPQ CX, $16
	JLT done
	MOVOU (SI), X0
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
	MOVOU X0, X4
	PCMPEQB X13, X4    // 0xff at a space
	PMOVMSKB X4, DX
	ANDQ R12, DX
	NOTQ DX
	ANDQ DX, BX        // bit i: byte i becomes %XX
	PAND X14, X4
	PXOR X4, X0        // spaces made '+' under form encodings
	TESTQ BX, BX
	JNZ escape
	MOVOU X0, (DI)
	ADDQ $16, DI
	ADDQ $16, SI
	SUBQ $16, CX
	JMP loop

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

	ADDQ $16, SI
	SUBQ $16, CX
	JMP loop

done:
	SUBQ R9, DI
	MOVQ DI, ret+48(FP)
	RET
