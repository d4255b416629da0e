// Package jsonscan reads JSON (RFC 8259) in one pass over bytes, a string
// or a stream, checking its syntax as it goes, and hands its caller the
// keys, strings and numbers it walks to, as views of the input rather than
// copies. It names a value longer than a cap by its JSON pointer (RFC
// 6901), reads such a value through without keeping it, and bounds
// nesting, so that hostile input costs bounded memory.
//
// It exists for the webhook batches a bank posts, which paygate validates
// whole or from a stream (500 MB in a few tens of megabytes), reporting
// each problem at its pointer, and for report pages and transaction
// histories, whose rows it cuts out of one page without decoding them:
// encoding/json would decode every value into memory first, allocating
// for each, and could not say where a too-long value was. It accepts
// exactly what encoding/json accepts and decodes strings as it does
// (FuzzScannerMatchesJSON holds it to that).
package jsonscan
