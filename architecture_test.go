package paygate

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sides are the two audiences' files, matched by name: the merchant's
// callback receiver and the bank's webhook sender. Everything else in the
// root package is shared vocabulary, and internal/ packages hold the
// machinery (the compiler keeps their arrows one way). What imports cannot
// express is that the two sides stand apart: neither may use a name that the
// other declares.
var sides = []struct {
	name     string
	prefixes []string
}{
	{"callback", []string{"callback", "dedupe", "hook_claim", "reconcile"}},
	{"webhook", []string{"webhook", "ordernos"}},
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

// crossCutting are the test files that test a promise of several files
// at once, so have no x.go to stand beside; every other x_test.go (or
// x_bench_test.go, x_fuzz_test.go, x_ref_test.go) tests x.go.
var crossCutting = map[string]string{
	"architecture_test.go":      "the file graph and this map",
	"callback_receiver_test.go": "the CallbackHandler end to end over HTTP",
	"dedupe_contract_test.go":   "MemoryDeduper under dedupetest's contract",
	"dedupe_hostile_test.go":    "MemoryDeduper against a model under hostile use",
	"doccomment_test.go":        "a doc comment on every exported name",
	"docs_test.go":              "the citations of docs/",
	"example_client_test.go":    "runnable examples of the Client",
	"example_test.go":           "runnable examples of the package",
	"guard_internal_test.go":    "issue 42's guards: browser signatures' clock, the stream's long values",
	"guard_test.go":             "issue 42's guards: old reconciliations, create-or-find after a 503",
	"outbound_safety_test.go":   "no secret leaves by redirect or error, every outbound path",
	"reconcile_hold_test.go":    "reconcile.go's held-back records, with the callback path",
	"recovery_test.go":          "missed callbacks recovered against the sandbox",
	"repository_test.go":        "the repository stands on its own",
	"webhook_schema_test.go":    "webhook_schema.json against the validator",
}

// TestTestsBesideTheirCode holds the rule that x_test.go tests x.go.
func TestTestsBesideTheirCode(t *testing.T) {
	names, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	for _, n := range names {
		if _, ok := crossCutting[n]; ok {
			continue
		}
		base := strings.TrimSuffix(n, "_test.go")
		for _, suffix := range []string{"_bench", "_fuzz", "_ref"} {
			base = strings.TrimSuffix(base, suffix)
		}
		_, err := os.Stat(base + ".go")
		require.NoError(t, err, "%s stands beside no %s.go: move its tests beside the code they test, or list it in crossCutting with the reason", n, base)
	}
	for n := range crossCutting {
		_, err := os.Stat(n)
		require.NoError(t, err, "crossCutting names a file that is gone")
	}
}

// The root package's budget: what a reader of `go doc .` and of its files
// meets. Exported names count package-level funcs, types, consts and vars
// and the methods of exported types, in non-test files.
const (
	maxRootExported = 240
	maxRootLines    = 8500
	maxFileLines    = 500
)

// TestRootPackageStaysReadable holds the root to its budget: at most
// maxRootExported exported names, maxRootLines lines of non-test Go, none
// of its files over maxFileLines; and no assembly anywhere in the module.
func TestRootPackageStaysReadable(t *testing.T) {
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	exportedTypes := map[string]bool{}
	var files []*ast.File
	total := 0
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		require.NoError(t, err)
		lines := strings.Count(string(src), "\n")
		require.LessOrEqual(t, lines, maxFileLines, "%s: split it by concept, or move its machinery to internal/", n)
		total += lines
		f, err := parser.ParseFile(fset, n, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
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
	require.LessOrEqual(t, total, maxRootLines, "lines of non-test Go in the root package")
	exported := 0
	for _, f := range files {
		for _, d := range f.Decls {
			exported += exportedIn(d, exportedTypes)
		}
	}
	require.LessOrEqual(t, exported, maxRootExported, "exported names in the root package")

	var asm []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".s") {
			asm = append(asm, p)
		}
		return err
	}))
	require.Empty(t, asm, "the SDK is pure Go")
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
