package paygate

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoFiles lists the repository's files (tracked, and new ones git does
// not ignore) with one of the given suffixes.
func repoFiles(t *testing.T, suffixes ...string) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		for _, suf := range suffixes {
			if strings.HasSuffix(f, suf) {
				if _, err := os.Stat(f); err == nil {
					files = append(files, f)
				}
				break
			}
		}
	}
	return files
}

var (
	// A citation of docs/protocol.md: a quoted section name, or a section
	// code, possibly after a comment line break.
	protocolCite = regexp.MustCompile(`docs/protocol\.md(?:\s*(?://\s*)?)(?:"((?:[^"\n]|\n\s*//\s*)+)"|(A[0-9]|B[0-9]|endpoints? [0-9]))`)
	// A comment's line break inside a cited name.
	commentBreak = regexp.MustCompile(`\s*\n\s*//\s*`)
	// An assumption ID.
	assumptionID = regexp.MustCompile(`\bA-[a-z][a-z-]*[a-z]\b`)
	// A citation of docs/protocol.md by anchor, in code or prose.
	protocolAnchor = regexp.MustCompile(`docs/protocol\.md#([A-Za-z0-9_-]+)`)
	// A citation of a document the repository does not have.
	outsideCite = regexp.MustCompile(`SPEC\.md|DESIGN\.md|\bshared/|\bspec (?:[AB][0-9]|endpoint)|\(spec[ ,]|\bthe spec\b`)
	// The code a protocol.md heading starts with ("A2 ", "Endpoint 4: ").
	headingCode = regexp.MustCompile(`(?i)^(?:[AB][0-9] |endpoint [0-9]+: )`)
	// A Markdown link.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// A heading, and an HTML anchor.
	mdHeading  = regexp.MustCompile(`(?m)^#+ (.+)$`)
	htmlAnchor = regexp.MustCompile(`<a id="([^"]+)">`)
)

// slug is GitHub's anchor for a heading.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists a Markdown file's headings' anchors and HTML ids.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(string(raw), -1) {
		out[slug(m[1])] = true
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = true
	}
	return out
}

// Every citation in code and docs points into the repository and resolves:
// docs/protocol.md sections and codes, assumption IDs, Markdown links and
// their anchors. Nothing cites the team's unshipped documents.
func TestDocCitationsResolve(t *testing.T) {
	protocol, err := os.ReadFile("docs/protocol.md")
	require.NoError(t, err)
	var headings []string
	for _, m := range mdHeading.FindAllStringSubmatch(string(protocol), -1) {
		headings = append(headings, strings.ToLower(m[1]))
	}
	// A quoted name is a whole heading, with or without its code ("Payment
	// callback" for "A2 Payment callback"); a code (A2, endpoint 4) starts
	// one. A part of a heading does not resolve: a reader searches for it.
	inHeading := func(cite string, quoted bool) bool {
		cite = strings.ToLower(cite)
		cite = strings.Replace(cite, "endpoints", "endpoint", 1)
		for _, h := range headings {
			if quoted && (h == cite || headingCode.ReplaceAllString(h, "") == cite) ||
				!quoted && strings.HasPrefix(h, cite) && headingCode.MatchString(h) {
				return true
			}
		}
		return false
	}
	protocolAnchors := anchors(t, "docs/protocol.md")
	ids := anchors(t, "docs/assumptions.md")
	cited := map[string]bool{}
	for _, f := range repoFiles(t, ".go", ".md", ".py", ".sh") {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		text := string(raw)
		if m := outsideCite.FindString(text); m != "" {
			t.Errorf("%s cites %q, which is not in the repository: cite docs/protocol.md", f, m)
		}
		for _, m := range protocolCite.FindAllStringSubmatch(text, -1) {
			if f == "docs_test.go" {
				break
			}
			sec := commentBreak.ReplaceAllString(m[1]+m[2], " ")
			if !inHeading(sec, m[1] != "") {
				t.Errorf("%s cites docs/protocol.md %q: no such heading", f, sec)
			}
			cited[sec] = true
		}
		for _, m := range protocolAnchor.FindAllStringSubmatch(text, -1) {
			if f != "docs_test.go" && !protocolAnchors[m[1]] {
				t.Errorf("%s cites docs/protocol.md#%s: no such heading", f, m[1])
			}
		}
		if f != "docs_test.go" {
			for _, id := range assumptionID.FindAllString(text, -1) {
				if !ids[id] {
					t.Errorf("%s names assumption %s: not in docs/assumptions.md", f, id)
				}
			}
		}
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
				_, err := os.Stat(path)
				require.NoError(t, err, "%s links to %s", f, target)
			}
			if anchor != "" && strings.HasSuffix(path, ".md") {
				require.True(t, anchors(t, path)[anchor], "%s links to %s: no such anchor", f, target)
			}
		}
	}
	require.NotEmpty(t, cited, "the code cites docs/protocol.md")
}

// No file the repository tracks is one its .gitignore ignores.
func TestNoTrackedFileIsIgnored(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "--cached", "--ignored", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	require.Empty(t, strings.TrimSpace(string(out)))
}
