package paygate

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rooms are the package's files grouped by concept, bottom first, as
// docs/architecture.md draws them: a file may use what its own room and the
// rooms below it declare, never a room above. A new file joins a room here.
var rooms = []struct {
	name  string
	files []string
}{
	{"vocabulary", []string{"doc.go", "errors.go", "redact.go", "amount.go", "status.go", "fpx.go", "email.go", "rules.go", "endpoints.go", "service_url.go", "encoding.go", "escape_amd64.go", "escape_other.go", "key.go", "secret.go"}},
	{"json", []string{"jsonscan.go", "jsonwindow.go"}},
	{"signing", []string{"canonical.go", "sign.go", "sign_url.go"}},
	{"transport", []string{"retry.go", "scrub.go", "transport.go", "options.go"}},
	{"client", []string{"client.go", "checkout.go", "qr.go", "health.go", "reports.go", "paging.go", "payment_record.go", "transactions.go"}},
	{"callback", []string{"dedupe.go", "dedupe_store.go", "hook_claim.go", "callback.go", "callback_body.go", "callback_defaults.go", "callback_event.go", "callback_explain.go", "callback_handler.go", "callback_lease.go", "callback_request.go", "reconcile.go"}},
	{"webhook", []string{"webhook.go", "webhook_fields.go", "webhook_fields_lookup.go", "webhook_time.go", "ordernos.go", "webhook_rules.go", "webhook_decode.go", "webhook_stream.go", "webhook_validator.go", "webhook_sender.go"}},
}

// siblings are rooms at the same height that use nothing of each other,
// though rooms lists them one above the other.
var siblings = [][2]string{{"webhook", "callback"}}

// TestFileGraphRunsOneWay type-checks the package and fails on every use of
// a package-level name (or a method or field) declared in a file of a room
// above the user's: the arrows between rooms run one way, downwards.
func TestFileGraphRunsOneWay(t *testing.T) {
	roomOf := map[string]int{}
	for i, r := range rooms {
		for _, f := range r.files {
			_, dup := roomOf[f]
			require.False(t, dup, "%s is in two rooms", f)
			roomOf[f] = i
		}
	}
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		_, ok := roomOf[n]
		require.True(t, ok, "%s is in no room: add it to rooms (architecture_test.go) and docs/architecture.md", n)
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	for f := range roomOf {
		_, err := os.Stat(f)
		require.NoError(t, err, "rooms names a file that is gone")
	}
	// Imports are not read, so that the check takes a tenth of a second:
	// names from other packages stay untyped (their errors are ignored),
	// while the names of this package still resolve. Against a full check
	// (importer "source") it misses 4 of about 4,800 uses, each reached
	// through a value of an imported type: a type assertion on a pool's or
	// a context's value, an iterator's element and its method.
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	pkg, _ := conf.Check("paygate", fset, files, info)

	var upward []string
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !declaredInFile(pkg, obj) {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if roomOf[to] > roomOf[from] || isSibling(rooms[roomOf[from]].name, rooms[roomOf[to]].name) {
			upward = append(upward, fset.Position(id.Pos()).String()+": "+id.Name+
				" ("+rooms[roomOf[from]].name+" uses "+rooms[roomOf[to]].name+", "+to+")")
		}
	}
	sort.Strings(upward)
	require.Empty(t, upward, "uses that run up the rooms, or between siblings")
}

// isSibling reports whether rooms a and b are siblings.
func isSibling(a, b string) bool {
	for _, s := range siblings {
		if s == [2]string{a, b} || s == [2]string{b, a} {
			return true
		}
	}
	return false
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

// TestArchitectureDocNamesEveryRoom holds docs/architecture.md to the rooms
// above: each room's name and files appear in it.
func TestArchitectureDocNamesEveryRoom(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	require.NoError(t, err)
	for _, r := range rooms {
		require.Contains(t, string(doc), "**"+r.name+"**", "docs/architecture.md names the room")
		for _, f := range r.files {
			if _, err := os.Stat(f); err == nil {
				require.True(t, slices.Contains(strings.Fields(strings.NewReplacer("`", " ", ",", " ", "(", " ", ")", " ").Replace(string(doc))), f),
					"docs/architecture.md names %s (room %s)", f, r.name)
			}
		}
	}
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
