// Command filegraph prints, for the Go package in a directory, which of
// its non-test files uses names declared in which other (the file-level
// reference graph), and the cycles among files (.ci/report.sh). A reader
// sees whether data flows one way between a concept's files; it judges
// nothing and always exits 0 once it could read the package.
//
// Usage: go run ./filegraph DIR [PREFIX] (PREFIX: only the files named so).
// WHY=from.go>to.go also prints each name from.go uses of to.go.
package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: filegraph DIR [PREFIX]")
		os.Exit(2)
	}
	dir := os.Args[1]
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintln(os.Stderr, "filegraph:", err)
			os.Exit(1)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	pkg, _ := conf.Check("p", fset, files, info)
	edges := map[string]map[string]bool{}
	add := func(pos token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		if obj.Parent() != pkg.Scope() {
			switch o := obj.(type) {
			case *types.Func:
			case *types.Var:
				if !o.IsField() {
					return
				}
			default:
				return
			}
		}
		from := filepath.Base(fset.Position(pos).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			return
		}
		if edges[from] == nil {
			edges[from] = map[string]bool{}
		}
		edges[from][to] = true
		if os.Getenv("WHY") == from+">"+to {
			fmt.Println("  uses", obj.Name(), "at", fset.Position(pos))
		}
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	var froms []string
	for f := range edges {
		froms = append(froms, f)
	}
	sort.Strings(froms)
	filter := ""
	if len(os.Args) > 2 {
		filter = os.Args[2]
	}
	for _, f := range froms {
		if filter != "" && !strings.HasPrefix(f, filter) {
			continue
		}
		var tos []string
		for t := range edges[f] {
			tos = append(tos, t)
		}
		sort.Strings(tos)
		fmt.Printf("%s -> %s\n", f, strings.Join(tos, " "))
	}
	// strongly connected components (Tarjan)
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	i := 0
	var sccs [][]string
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = i, i
		i++
		stack = append(stack, v)
		on[v] = true
		for w := range edges[v] {
			if _, ok := index[w]; !ok {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			if len(c) > 1 {
				sort.Strings(c)
				sccs = append(sccs, c)
			}
		}
	}
	all := map[string]bool{}
	for f, ts := range edges {
		all[f] = true
		for t := range ts {
			all[t] = true
		}
	}
	var keys []string
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := index[k]; !ok {
			strong(k)
		}
	}
	for _, c := range sccs {
		fmt.Printf("cycle of %d files: %s\n", len(c), strings.Join(c, " "))
	}
}

// noImports reads no imported package: only the package's own names are
// resolved, which is all the graph needs, in a tenth of a second.
type noImports struct{}

func (noImports) Import(path string) (*types.Package, error) {
	return nil, errors.New("not read: " + path)
}
