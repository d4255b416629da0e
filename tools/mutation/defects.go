package main

// The catalogue of hand-written defects (defects.tsv) and how each is
// found in the code: by package, declaration and pattern, never by file
// or exact text, so that a refactor that moves a function between files,
// or reflows it, does not have to edit the catalogue.

import (
	_ "embed"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// defect is one deliberate defect: in the declaration decl of the package
// in directory pkg (relative to the repository, "." for the root), the
// nth match of pattern becomes replacement. issue marks the fifteen
// defects of the mutation check's first run (issue 20); tests are the
// packages whose tests must catch it.
type defect struct {
	name        string
	issue       bool
	pkg         string
	decl        string // a func, "(*T).m" or "T.m" for a method, or a var, const or type name
	nth         int
	pattern     string
	replacement string
	tests       []string
}

// where says where d applies, for a listing: "in (*event).run, the 2nd
// `!=` becomes `==`".
func (d defect) where() string {
	becomes := "is removed"
	if d.replacement != "" {
		becomes = "becomes `" + oneLine(d.replacement) + "`"
	}
	return fmt.Sprintf("%s: in %s, the %s `%s` %s", d.pkg, d.decl, ordinal(d.nth), d.pattern, becomes)
}

// ordinal spells n as 1st, 2nd, 3rd, 4th...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// oneLine folds text's white space for a listing.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

//go:embed defects.tsv
var catalogue string

// columns of defects.tsv.
const columns = "name\tissue\tpackage\tdecl\tnth\tpattern\treplacement\ttests"

// parseCatalogue reads the catalogue: a header line, then one defect a
// line, tab-separated, in the order of columns; lines starting with # are
// comments. In replacement, \n, \t and \\ stand for a newline, a tab and a
// backslash; pattern is matched with its white space ignored (matchSpans).
func parseCatalogue(text string) ([]defect, error) {
	var all []defect
	seen := map[string]bool{}
	header := false
	for n, line := range strings.Split(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case !header && line != columns:
			return nil, fmt.Errorf("defects.tsv:%d: want the header %q", n+1, columns)
		case !header:
			header = true
			continue
		}
		d, err := parseDefect(line)
		if err == nil && seen[d.name] {
			err = fmt.Errorf("a name, and one no other defect has: %q", d.name)
		}
		if err != nil {
			return nil, fmt.Errorf("defects.tsv:%d: %w", n+1, err)
		}
		seen[d.name] = true
		all = append(all, d)
	}
	if !header {
		return nil, errors.New("defects.tsv: no header")
	}
	return all, nil
}

// parseDefect reads one line of the catalogue.
func parseDefect(line string) (defect, error) {
	f := strings.Split(line, "\t")
	if len(f) != 8 {
		return defect{}, fmt.Errorf("want 8 tab-separated columns, got %d", len(f))
	}
	nth, err := strconv.Atoi(f[4])
	if err != nil || nth < 1 {
		return defect{}, fmt.Errorf("nth must be 1 or more: %q", f[4])
	}
	d := defect{name: f[0], issue: f[1] == "20", pkg: f[2], decl: f[3], nth: nth,
		pattern: f[5], replacement: unescape(f[6]), tests: strings.Fields(f[7])}
	switch {
	case d.name == "":
		return defect{}, errors.New("a name, and one no other defect has: \"\"")
	case f[1] != "20" && f[1] != "-":
		return defect{}, fmt.Errorf("issue is 20 or -: %q", f[1])
	case d.pkg == "" || d.decl == "" || strings.TrimSpace(d.pattern) == "" || len(d.tests) == 0:
		return defect{}, errors.New("package, decl, pattern and tests are required")
	}
	return d, nil
}

// unescape reads \n, \t and \\ in a replacement.
func unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(s)
}

// located is where a defect applies: a file (relative to the repository)
// and the byte range its replacement takes.
type located struct {
	file       string
	start, end int
}

// locate finds d in the repository at root. It fails when the package or
// the declaration cannot be read, the declaration is not declared exactly
// once, or pattern has fewer than nth matches in it.
func locate(root string, d defect) (located, error) {
	dir := filepath.Join(root, filepath.FromSlash(d.pkg))
	bp, err := build.ImportDir(dir, 0) // the files this platform builds
	if err != nil {
		return located{}, err
	}
	var found []located
	var src []byte
	for _, name := range bp.GoFiles {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return located{}, err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, text, parser.SkipObjectResolution)
		if err != nil {
			return located{}, err
		}
		for _, n := range declsNamed(f, d.decl) {
			file := filepath.ToSlash(filepath.Join(d.pkg, name))
			found = append(found, located{file, fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset})
			src = text
		}
	}
	switch len(found) {
	case 0:
		return located{}, fmt.Errorf("%s declares no %s", d.pkg, d.decl)
	case 1:
	default:
		return located{}, fmt.Errorf("%s declares %s %d times", d.pkg, d.decl, len(found))
	}
	at := found[0]
	spans := matchSpans(src[at.start:at.end], d.pattern)
	if len(spans) < d.nth {
		return located{}, fmt.Errorf("%d matches of `%s` in %s, not the %s", len(spans), oneLine(d.pattern), d.decl, ordinal(d.nth))
	}
	s := spans[d.nth-1]
	return located{at.file, at.start + s[0], at.start + s[1]}, nil
}

// declsNamed returns the declarations of f named name: a func or method
// (a method's receiver written (*T).m or T.m, either matching), or the
// spec of a var, const or type.
func declsNamed(f *ast.File, name string) []ast.Node {
	want := declKey(name)
	var out []ast.Node
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if declKey(funcName(d)) == want {
				out = append(out, d)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				for _, n := range specNames(s) {
					if n == name {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// declKey folds a method's receiver: (*T).m and T.m are one key.
func declKey(name string) string {
	return strings.NewReplacer("(*", "", "(", "", ")", "").Replace(name)
}

// funcName names a func "f", a method "(*T).m" or "T.m" (type parameters
// left out).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := false
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = true, s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, _ := t.(*ast.Ident)
	if id == nil {
		return fd.Name.Name
	}
	if star {
		return "(*" + id.Name + ")." + fd.Name.Name
	}
	return id.Name + "." + fd.Name.Name
}

// specNames are the names a var, const or type spec declares.
func specNames(s ast.Spec) []string {
	switch s := s.(type) {
	case *ast.ValueSpec:
		var names []string
		for _, id := range s.Names {
			names = append(names, id.Name)
		}
		return names
	case *ast.TypeSpec:
		return []string{s.Name.Name}
	}
	return nil
}

// matchSpans returns the byte ranges of src (one declaration's text) that
// pattern matches, in order. White space and comments are ignored on both
// sides, so a reflowed or recommented declaration still matches; a match
// begins and ends on a token's edge (`exp` does not match in `expValue`)
// or inside a string literal (a defect may change some words of an SQL
// statement).
func matchSpans(src []byte, pattern string) [][2]int {
	norm, offsets, starts, ends := normalize(src)
	want := strings.Map(dropSpace, pattern)
	if want == "" {
		return nil
	}
	var out [][2]int
	for i := 0; ; {
		j := strings.Index(norm[i:], want)
		if j < 0 {
			return out
		}
		from, to := i+j, i+j+len(want)
		if starts[from] && ends[to] {
			out = append(out, [2]int{offsets[from], offsets[to-1] + 1})
		}
		i = from + 1
	}
}

// dropSpace drops white space in strings.Map.
func dropSpace(r rune) rune {
	if unicode.IsSpace(r) {
		return -1
	}
	return r
}

// normalize returns src's tokens without white space and comments,
// concatenated; the source offset of each byte of it; and where a match may
// begin (starts[i]: byte i begins a token or lies in a string literal) and
// end (ends[i]: byte i-1 ends a token or lies in a string literal).
func normalize(src []byte) (string, []int, []bool, []bool) {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	s.Init(file, src, func(token.Position, string) {}, 0)
	var norm []byte
	var offsets []int
	var starts []bool
	ends := []bool{false}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // inserted at a line's end: no text of its own
		}
		off := file.Offset(pos)
		size := len(lit)
		if lit == "" || tok == token.SEMICOLON {
			size = len(tok.String())
		}
		inString := tok == token.STRING || tok == token.CHAR
		first := true
		for k := off; k < off+size && k < len(src); k++ {
			if unicode.IsSpace(rune(src[k])) {
				continue
			}
			norm = append(norm, src[k])
			offsets = append(offsets, k)
			starts = append(starts, first || inString)
			ends = append(ends, inString)
			first = false
		}
		ends[len(ends)-1] = true
	}
	return string(norm), offsets, starts, ends
}

// apply returns src with d, located at at, planted.
func apply(src []byte, at located, d defect) []byte {
	out := make([]byte, 0, len(src)+len(d.replacement))
	out = append(out, src[:at.start]...)
	out = append(out, d.replacement...)
	return append(out, src[at.end:]...)
}
