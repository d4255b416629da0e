package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pkgA is a package as a refactor finds it; pkgB is the same code after the
// refactor: checkExp moved to another file, reflowed and commented.
var (
	pkgA = map[string]string{
		"a.go": `package p

import "errors"

const query = ` + "`SELECT 1 FROM t WHERE done\n\tFOR UPDATE SKIP LOCKED`" + `

type event struct{ n int }

func (e *event) run(a, b int) bool { return a != b && e.n != 0 && a != 0 }

func checkExp(now, exp, expValue int) error {
	if now > exp {
		return errors.New("expired")
	}
	return nil
}
`,
	}
	pkgB = map[string]string{
		"a.go": `package p

const query = ` + "`SELECT 1 FROM t WHERE done FOR UPDATE   SKIP LOCKED`" + `

type event struct{ n int }

func (e event) run(a, b int) bool {
	return a != b &&
		e.n != 0 && a != 0
}
`,
		"exp.go": `package p

import "errors"

// checkExp refuses an expired form.
func checkExp(now, exp, expValue int) error {
	if now >
		exp /* the form's */ {
		return errors.New("expired")
	}
	return nil
}
`,
	}
)

// writePackage writes files into a new directory p under a new root.
func writePackage(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "p"), 0o755))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, "p", name), []byte(text), 0o644))
	}
	return root
}

func TestLocateSurvivesARefactor(t *testing.T) {
	tests := []struct {
		name    string
		d       defect
		planted string // what the declaration holds once planted, white space aside
	}{
		{"an operator, the 2nd match", defect{decl: "(*event).run", nth: 2, pattern: "!=", replacement: "=="},
			"return a != b && e.n == 0 && a != 0"},
		{"a method named either way", defect{decl: "event.run", nth: 2, pattern: "!= 0", replacement: "== 0"},
			"return a != b && e.n != 0 && a == 0"},
		{"an insertion after a token", defect{decl: "checkExp", nth: 1, pattern: "> exp", replacement: "> exp && false"},
			"if now > exp && false {"},
		{"a call dropped", defect{decl: "checkExp", nth: 1, pattern: `return errors.New("expired")`, replacement: "return nil"},
			"if now > exp { return nil }"},
		{"words inside a string literal", defect{decl: "query", nth: 1, pattern: "SKIP LOCKED", replacement: ""},
			"FOR UPDATE `"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.d.pkg = "p"
			for _, files := range []map[string]string{pkgA, pkgB} {
				root := writePackage(t, files)
				at, err := locate(root, tt.d)
				require.NoError(t, err)
				src, err := os.ReadFile(filepath.Join(root, at.file))
				require.NoError(t, err)
				planted := strings.Map(dropSpace, string(apply(src, at, tt.d)))
				planted = strings.ReplaceAll(planted, "/*theform's*/", "")
				require.Contains(t, planted, strings.Map(dropSpace, tt.planted))
			}
		})
	}
}

func TestLocateSaysWhyNot(t *testing.T) {
	tests := []struct {
		name string
		d    defect
		want string
	}{
		{"no such declaration", defect{decl: "gone", nth: 1, pattern: "x"}, "declares no gone"},
		{"fewer matches than nth", defect{decl: "(*event).run", nth: 4, pattern: "!=", replacement: "=="}, "3 matches of `!=`"},
		{"a token's part is no match", defect{decl: "checkExp", nth: 1, pattern: "expV", replacement: "x"}, "0 matches"},
		{"a pattern across declarations", defect{decl: "checkExp", nth: 1, pattern: "} func", replacement: ""}, "0 matches"},
		{"text in a comment is no match", defect{decl: "checkExp", nth: 1, pattern: "the form's", replacement: ""}, "0 matches"},
	}
	root := writePackage(t, pkgB)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.d.pkg = "p"
			_, err := locate(root, tt.d)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestParseCatalogue(t *testing.T) {
	header := columns + "\n"
	tests := []struct {
		name, text, want string
	}{
		{"the catalogue", catalogue, ""},
		{"one defect", header + "# a comment\nx\t20\t.\tf\t2\ta != b\ta ==\\tb\\n\t. ./pgstore\n", ""},
		{"no header", "x\t-\t.\tf\t1\ta\tb\t.\n", "want the header"},
		{"a column short", header + "x\t-\t.\tf\t1\ta\t.\n", "want 8"},
		{"nth zero", header + "x\t-\t.\tf\t0\ta\tb\t.\n", "nth must be 1 or more"},
		{"a name twice", header + "x\t-\t.\tf\t1\ta\tb\t.\nx\t-\t.\tf\t1\ta\tb\t.\n", "one no other defect has"},
		{"no tests", header + "x\t-\t.\tf\t1\ta\tb\t\n", "tests are required"},
		{"an issue other than 20", header + "x\t21\t.\tf\t1\ta\tb\t.\n", "issue is 20 or -"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, err := parseCatalogue(tt.text)
			if tt.want != "" {
				require.ErrorContains(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, all)
			if tt.name == "one defect" {
				require.Equal(t, defect{name: "x", issue: true, pkg: ".", decl: "f", nth: 2, pattern: "a != b",
					replacement: "a ==\tb\n", tests: []string{".", "./pgstore"}}, all[0])
			}
		})
	}
}

func TestEquivalentsParse(t *testing.T) {
	equiv, err := readEquivalents()
	require.NoError(t, err)
	require.NotEmpty(t, equiv)
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 112: "112th"} {
		require.Equal(t, want, ordinal(n))
	}
}
