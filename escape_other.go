//go:build !amd64 || purego

package paygate

// escapeVector is escape_amd64.go's vector path, absent on this platform:
// appendEscaped escapes every byte itself.
func escapeVector([]byte, string, queryEncoding) (written, read int) { return 0, 0 }
