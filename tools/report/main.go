// Command report prints figures of the SDK module for a reviewer
// (.ci/report.sh): the root package's lines of non-test Go, its files over
// 500 lines and its exported names; the lines of non-test Go of every
// package; the number of test files. It prints figures only: it judges
// none of them, and exits non-zero only when it cannot read the module.
//
// Usage: go run ./report [module-dir] (the SDK module, .. by default).
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// longFile is the length past which a file is named: a prompt to look,
// not a limit.
const longFile = 500

func main() {
	root := ".."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := report(root); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// pkgFiles are one directory's Go files: lines of each non-test file, and
// how many test files.
type pkgFiles struct {
	lines map[string]int
	tests int
}

func report(root string) error {
	pkgs, err := scan(root)
	if err != nil {
		return err
	}
	rootPkg := pkgs["."]
	total, long := 0, []string{}
	for name, n := range rootPkg.lines {
		total += n
		if n > longFile {
			long = append(long, fmt.Sprintf("%s (%d)", name, n))
		}
	}
	sort.Strings(long)
	exported, err := exportedNames(root, rootPkg.lines)
	if err != nil {
		return err
	}
	fmt.Printf("root package: %d lines of non-test Go in %d files, %d exported names\n", total, len(rootPkg.lines), exported)
	fmt.Println(strings.TrimSpace(fmt.Sprintf("root files over %d lines: %d %s", longFile, len(long), strings.Join(long, ", "))))
	fmt.Println("lines of non-test Go by package:")
	dirs := make([]string, 0, len(pkgs))
	tests := 0
	for dir, p := range pkgs {
		dirs = append(dirs, dir)
		tests += p.tests
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		n := 0
		for _, l := range pkgs[dir].lines {
			n += l
		}
		if n > 0 {
			fmt.Printf("  %6d  %s\n", n, dir)
		}
	}
	fmt.Printf("test files: %d (root package: %d)\n", tests, rootPkg.tests)
	return nil
}

// scan reads the Go files of the module at root, by directory, leaving
// out testdata, hidden directories and nested modules (bench/, e2e/,
// otel/, tools/).
func scan(root string) (map[string]*pkgFiles, error) {
	pkgs := map[string]*pkgFiles{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || exists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if pkgs[dir] == nil {
			pkgs[dir] = &pkgFiles{lines: map[string]int{}}
		}
		if strings.HasSuffix(p, "_test.go") {
			pkgs[dir].tests++
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		pkgs[dir].lines[d.Name()] = strings.Count(string(src), "\n")
		return nil
	})
	if pkgs["."] == nil {
		pkgs["."] = &pkgFiles{lines: map[string]int{}}
	}
	return pkgs, err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// exportedNames counts what a reader of go doc meets in the root package:
// exported package-level funcs, types, consts and vars, and the exported
// methods of exported types, in the given non-test files.
func exportedNames(root string, files map[string]int) (int, error) {
	fset := token.NewFileSet()
	exportedTypes := map[string]bool{}
	var parsed []*ast.File
	for name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(root, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return 0, err
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
						exportedTypes[ts.Name.Name] = true
					}
				}
			}
		}
	}
	n := 0
	for _, f := range parsed {
		for _, d := range f.Decls {
			n += exportedIn(d, exportedTypes)
		}
	}
	return n, nil
}

// exportedIn counts the exported names declaration d adds: a func, a
// method of an exported type, or each exported type, const and var.
func exportedIn(d ast.Decl, exportedTypes map[string]bool) int {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return 0
		}
		if d.Recv == nil {
			return 1
		}
		recv := d.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		if id, ok := recv.(*ast.Ident); ok && exportedTypes[id.Name] {
			return 1
		}
	case *ast.GenDecl:
		n := 0
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					n++
				}
			case *ast.ValueSpec:
				for _, id := range s.Names {
					if id.IsExported() {
						n++
					}
				}
			}
		}
		return n
	}
	return 0
}
