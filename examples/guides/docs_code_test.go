package guides

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// codeMarker names the region a Go block shows: the comment on the line
// just before the block's fence.
var codeMarker = regexp.MustCompile(`^<!-- code: ([^#\s]+)#([a-z0-9-]+) -->$`)

// codeRegion returns the lines of file between "// code: name" and
// "// end: name", without the indentation of the opening line.
func codeRegion(file []byte, name string) (string, error) {
	lines := strings.Split(string(file), "\n")
	start, end, indent := -1, -1, ""
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case "// code: " + name:
			if start >= 0 {
				return "", fmt.Errorf("region %q opens twice", name)
			}
			start, indent = i, l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		case "// end: " + name:
			if end >= 0 {
				return "", fmt.Errorf("region %q closes twice", name)
			}
			end = i
		}
	}
	if start < 0 || end <= start {
		return "", fmt.Errorf("no region %q (a line \"// code: %s\" and, after it, \"// end: %s\")", name, name, name)
	}
	body := lines[start+1 : end]
	for i, l := range body {
		if l != "" && !strings.HasPrefix(l, indent) {
			return "", fmt.Errorf("region %q: line %d is indented less than its opening line", name, start+2+i)
		}
		body[i] = strings.TrimPrefix(l, indent)
	}
	return strings.Join(body, "\n") + "\n", nil
}

// compiledPath reports whether a region's file is Go that `go test ./...`
// compiles and runs: a file under examples/, the otel module's example
// (otel/example/, tested by .ci/run in that module), or a test file of the
// root package.
func compiledPath(path string) bool {
	clean := filepath.ToSlash(filepath.Clean(path))
	return strings.HasSuffix(clean, ".go") && !strings.HasPrefix(clean, "../") &&
		(strings.HasPrefix(clean, "examples/") || strings.HasPrefix(clean, "otel/example/") ||
			!strings.Contains(clean, "/") && strings.HasSuffix(clean, "_test.go"))
}

// checkCodeBlocks lists the problems of one Markdown document: a Go block
// without a marker, a marker without a Go block, a region that does not
// exist or is not compiled code, a block that differs from its region.
// read reads a file by its path from the repository's root.
func checkCodeBlocks(doc string, read func(string) ([]byte, error)) []string {
	var problems []string
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if p := fenceProblem(lines, i); p != "" {
			problems = append(problems, fmt.Sprintf("line %d: %s", i+1, p))
			continue
		}
		marker := codeMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if marker == nil {
			continue
		}
		end := i + 2
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			return append(problems, fmt.Sprintf("line %d: the Go block is not closed", i+2))
		}
		block := strings.Join(lines[i+2:end], "\n") + "\n"
		if p := checkBlock(marker[1], marker[2], block, read); p != "" {
			problems = append(problems, fmt.Sprintf("line %d: %s", i+2, p))
		}
		i = end
	}
	return problems
}

// fenceProblem says what is wrong with line i as a marker or a Go fence:
// a marker must be followed by "```go" at the start of a line, and a Go
// fence must be preceded by a marker.
func fenceProblem(lines []string, i int) string {
	l := strings.TrimSpace(lines[i])
	switch {
	case codeMarker.MatchString(l) && (i+1 == len(lines) || lines[i+1] != "```go"):
		return "a code marker not followed by a ```go fence"
	case !strings.HasPrefix(strings.ToLower(l), "```go"):
		return ""
	case i == 0 || !codeMarker.MatchString(strings.TrimSpace(lines[i-1])):
		return "a Go block without <!-- code: FILE#REGION --> on the line before"
	case lines[i] != "```go":
		return "a Go block's fence must be ```go at the start of the line"
	}
	return ""
}

// checkBlock compares one block with the region it names.
func checkBlock(path, name, block string, read func(string) ([]byte, error)) string {
	if !compiledPath(path) {
		return fmt.Sprintf("%s: a region must be in a .go file under examples/ or otel/example/ or a root _test.go file, which go test ./... runs", path)
	}
	file, err := read(path)
	if err != nil {
		return err.Error()
	}
	region, err := codeRegion(file, name)
	if err != nil {
		return fmt.Sprintf("%s: %v", path, err)
	}
	if region != block {
		return fmt.Sprintf("the block differs from %s#%s, the code that runs; copy the region here\n--- block\n%s--- region\n%s", path, name, block, region)
	}
	return ""
}

// root is the repository's root, from this package's directory.
const root = "../.."

// markdownFiles lists the repository's Markdown files (tracked, and new
// ones git does not ignore), by their paths from the root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	return files
}

// Every Go block of every Markdown file (README.md, the guides in docs/)
// is a region of code that go test runs (this package, examples/..., root
// tests), verbatim: a guide's code cannot drift from the code that
// compiles and runs.
func TestDocsCodeBlocks(t *testing.T) {
	read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, p)) }
	files := markdownFiles(t)
	require.Contains(t, files, "README.md")
	blocks := map[string]int{}
	for _, f := range files {
		raw, err := read(f)
		require.NoError(t, err)
		blocks[f] = strings.Count(string(raw), "\n```go\n")
		for _, p := range checkCodeBlocks(string(raw), read) {
			t.Errorf("%s %s", f, p)
		}
	}
	for _, f := range []string{"README.md", "docs/calling-the-gateway.md", "docs/receiving-callbacks.md", "docs/bank-sender.md"} {
		require.NotZero(t, blocks[f], "%s shows Go code, each block checked here", f)
	}
}

// The check itself: what passes and what fails.
func TestCheckCodeBlocks(t *testing.T) {
	src := "package x\n\nfunc f() {\n\t// code: demo\n\tx := 1\n\n\t_ = x\n\t// end: demo\n}\n"
	files := map[string]string{"examples/x/x_test.go": src, "x.go": src}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	const marker = "<!-- code: examples/x/x_test.go#demo -->\n"
	for _, tc := range []struct {
		name, doc, problem string
	}{
		{"verbatim", marker + "```go\nx := 1\n\n_ = x\n```\n", ""},
		{"no Go block", "```sh\ngo test ./...\n```\n", ""},
		{"drifted", marker + "```go\nx := 2\n\n_ = x\n```\n", "differs"},
		{"a line missing", marker + "```go\nx := 1\n_ = x\n```\n", "differs"},
		{"unmarked", "text\n```go\nx := 1\n```\n", "without <!-- code"},
		{"marker then text", marker + "text\n```go\nx := 1\n```\n", "not followed"},
		{"unknown region", "<!-- code: examples/x/x_test.go#other -->\n```go\nx := 1\n```\n", "no region"},
		{"unknown file", "<!-- code: examples/y/y.go#demo -->\n```go\nx := 1\n```\n", "not exist"},
		{"not run by go test", "<!-- code: x.go#demo -->\n```go\nx := 1\n\n_ = x\n```\n", "a region must be"},
		{"indented fence", "- item\n" + "  <!-- code: examples/x/x_test.go#demo -->\n  ```go\n  x := 1\n  ```\n", "not followed"},
		{"unclosed", marker + "```go\nx := 1\n", "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := checkCodeBlocks(tc.doc, read)
			if tc.problem == "" {
				require.Empty(t, problems)
				return
			}
			require.NotEmpty(t, problems)
			require.Contains(t, strings.Join(problems, "\n"), tc.problem)
		})
	}
}
