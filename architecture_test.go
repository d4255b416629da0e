package paygate

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sides are the two audiences' files, matched by the prefix of their
// name (callback_claim.go, hook_claim.go, reconcile.go, fulfil.go...): the
// merchant's callback receiver and the bank's webhook sender. Everything else in the
// root package is shared vocabulary, and internal/ packages hold the
// machinery (the compiler keeps their arrows one way). What imports cannot
// express is that the two sides stand apart: neither may use a name that the
// other declares.
var sides = []struct {
	name     string
	prefixes []string
}{
	{"callback", []string{"callback", "dedupe", "fulfil", "reconcile"}},
	{"webhook", []string{"webhook"}},
}

// sideOf names the side of file n, or "" for shared files.
func sideOf(n string) string {
	for _, s := range sides {
		for _, p := range s.prefixes {
			if strings.HasPrefix(n, p) {
				return s.name
			}
		}
	}
	return ""
}

// TestCallbackAndWebhookStandApart type-checks the package and fails on
// every use, from a file of one side, of a package-level name (or a method
// or field) declared in a file of the other.
func TestCallbackAndWebhookStandApart(t *testing.T) {
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	// Imports are not read, so that the check takes a tenth of a second:
	// names from other packages stay untyped (their errors are ignored),
	// while the names of this package still resolve.
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	pkg, _ := conf.Check("paygate", fset, files, info)

	var across []string
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !declaredInFile(pkg, obj) {
			continue
		}
		from := sideOf(filepath.Base(fset.Position(id.Pos()).Filename))
		to := sideOf(filepath.Base(fset.Position(obj.Pos()).Filename))
		if from != "" && to != "" && from != to {
			across = append(across, fset.Position(id.Pos()).String()+": "+id.Name+" ("+from+" uses "+to+")")
		}
	}
	sort.Strings(across)
	require.Empty(t, across, "uses between the callback and the webhook side")
}

// noImports is an importer that reads no package.
type noImports struct{}

func (noImports) Import(path string) (*types.Package, error) {
	return nil, errors.New("not read: " + path)
}

// declaredInFile reports whether obj is a package-level name or a method
// or struct field, the names a file offers the others.
func declaredInFile(pkg *types.Package, obj types.Object) bool {
	if obj.Parent() == pkg.Scope() {
		return true
	}
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}
