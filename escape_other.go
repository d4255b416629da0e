//go:build !amd64 || purego

package paygate

// appendFieldsVector is escape_amd64.go's vector path, absent on this
// platform: canonicaliser.appendQuery escapes every byte itself.
func appendFieldsVector(dst []byte, _ []field, ends []int, _ uint32, _ queryEncoding) (_ []byte, _ []int, ok bool) {
	return dst, ends, false
}

// appendEscapedVector is escape_amd64.go's vector path, absent on this
// platform: appendEscaped escapes every byte itself.
func appendEscapedVector(dst []byte, _ string, _ queryEncoding) (_ []byte, ok bool) {
	return dst, false
}

// appendRawVector is escape_amd64.go's vector path, absent on this
// platform: appendRawEscaped reads every byte itself.
func appendRawVector(dst []byte, _ string) (_ []byte, ok bool) {
	return dst, false
}

// appendRawQueryVector is escape_amd64.go's vector path, absent on this
// platform: appendSortedQuery writes pair by pair.
func appendRawQueryVector(dst []byte, _ string) (_ []byte, ok bool) {
	return dst, false
}

// queryMarksVector is escape_amd64.go's vector path, absent on this
// platform: appendSortedQuery splits pairs a byte at a time.
func queryMarksVector(marks []uint16, _ string) (_ []uint16, ok bool) {
	return marks, false
}
