package paygate

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxTrackedFile is the largest file the repository may track: anything
// bigger is an artefact, not source.
const maxTrackedFile = 1 << 20

// executableMagic are the first bytes of compiled binaries: ELF, Mach-O
// (32 and 64 bit, either byte order, and universal) and PE (MZ).
var executableMagic = []struct {
	name  string
	magic []byte
}{
	{"ELF", []byte{0x7f, 'E', 'L', 'F'}},
	{"Mach-O", []byte{0xfe, 0xed, 0xfa, 0xce}},
	{"Mach-O", []byte{0xfe, 0xed, 0xfa, 0xcf}},
	{"Mach-O", []byte{0xce, 0xfa, 0xed, 0xfe}},
	{"Mach-O", []byte{0xcf, 0xfa, 0xed, 0xfe}},
	{"Mach-O universal", []byte{0xca, 0xfe, 0xba, 0xbe}},
	{"PE", []byte{'M', 'Z'}},
}

// trackedFileProblems names each of files (relative to root) that is a
// compiled binary or larger than maxTrackedFile.
func trackedFileProblems(root string, files []string) []string {
	var problems []string
	for _, f := range files {
		path := filepath.Join(root, f)
		info, err := os.Lstat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		if info.Size() > maxTrackedFile {
			problems = append(problems, fmt.Sprintf("%s: %d bytes, over %d", f, info.Size(), maxTrackedFile))
		}
		head, err := readHead(path, 4)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		for _, m := range executableMagic {
			if bytes.HasPrefix(head, m.magic) {
				problems = append(problems, fmt.Sprintf("%s: a compiled binary (%s)", f, m.name))
				break
			}
		}
	}
	return problems
}

// readHead reads the first n bytes of a file (fewer if it is shorter).
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return head[:k], err
}

// No file the repository tracks is a compiled binary or over 1 MB: a
// newcomer's clone holds source, not artefacts.
func TestNoTrackedBinaryOrLargeFile(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git is unavailable or this is not a checkout: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	require.NotEmpty(t, files, "git ls-files lists the repository")
	root, err := exec.Command("git", "rev-parse", "--show-prefix").Output()
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(root)), "the test runs at the repository's root")
	require.Empty(t, trackedFileProblems(".", files))
}

// trackedFileProblems catches each kind of binary and a file over the
// limit, and passes text and a file of exactly the limit.
func TestTrackedFileProblems(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"elf":       append([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1}, make([]byte, 64)...),
		"macho":     {0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1},
		"universal": {0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2},
		"pe.exe":    []byte("MZ\x90\x00\x03"),
		"big.json":  bytes.Repeat([]byte("a"), maxTrackedFile+1),
		"limit.txt": bytes.Repeat([]byte("a"), maxTrackedFile),
		"main.go":   []byte("package main\n"),
		"empty":     nil,
		"short":     []byte{0x7f},
	}
	var names []string
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), content, 0o644))
		names = append(names, name)
	}
	names = append(names, "deleted-in-work-tree")
	got := strings.Join(trackedFileProblems(dir, names), "\n")
	for _, bad := range []string{"elf: a compiled binary (ELF)", "macho: a compiled binary (Mach-O)",
		"universal: a compiled binary (Mach-O universal)", "pe.exe: a compiled binary (PE)", "big.json: 1048577 bytes"} {
		require.Contains(t, got, bad)
	}
	for _, good := range []string{"limit.txt", "main.go", "empty", "short", "deleted"} {
		require.NotContains(t, got, good)
	}
}
