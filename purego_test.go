package paygate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModuleIsPureGo holds the module to Go source only: no assembly file
// anywhere in it, so that it builds the same on every GOOS and GOARCH.
func TestModuleIsPureGo(t *testing.T) {
	var asm []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".s") {
			asm = append(asm, p)
		}
		return err
	}))
	require.Empty(t, asm, "the SDK is pure Go")
}
