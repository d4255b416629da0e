//go:build unix

// The mechanical run (-mechanical): mutants generated from the code of the
// money path rather than chosen by hand. Every comparison is flipped and,
// for < <= > >=, shifted by one; every boolean condition that is not a
// comparison is negated; every return inside an if block that handles an
// error is dropped; every integer constant is moved by one; every call of a
// must-happen function (mustHappen) is removed.
//
// Thousands of mutants cannot each be compiled, so they are compiled
// together, as a schema: in a scratch copy, each mutated spot becomes an
// expression that keeps the original unless the mutant whose number the
// test process reads from PAYGATE_MUTANT is active (mutantOn, mutantPick
// in the file schemaFile adds to each package). A package's test binary is
// built once; then each mutant runs the tests that cover its line (one
// coverage profile per test, taken on the unmutated code). A mutant no test
// reaches is reported "uncovered". The spots the compiler refuses in a
// schema (a constant a context needs constant, for instance) are dropped
// and the schema built again; they are reported "not applicable".
//
// The verdicts go to -out as tab-separated lines; survivors that change no
// behaviour are listed, with the reason, in equivalent.tsv, and reported
// "equivalent".
package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// moneyPath lists, per package, the files whose code the mechanical run
// mutates: signing and verifying, the callback path and its lease, the
// Dedupers, FulfilTx and HookTx, reconciliation and the pending watch, paging and records, the sender's
// report and retries, scrubbing and redaction, amounts and time parsing.
var moneyPath = []moneyPackage{
	{"./internal/signing", []string{"encoding.go", "message.go", "sign.go", "signing.go", "uuid.go", "verify.go"},
		[]string{"./internal/signing", "."}},
	{"./internal/memstore", []string{"memstore.go", "expiry.go"}, []string{"./internal/memstore", "."}},
	{"./internal/scrub", []string{"scrub.go", "url.go"}, []string{"./internal/scrub", "."}},
	{"./internal/webhooktime", []string{"webhooktime.go"}, []string{"./internal/webhooktime", "."}},
	{".", []string{
		"amount.go", "callback.go", "callback_serve.go", "callback_event.go", "callback_handler.go",
		"callback_claim.go", "dedupe.go", "fulfil.go", "key.go", "paging.go", "payment_record.go",
		"reconcile.go", "reports.go", "retry.go", "secret.go", "sign.go", "status.go", "transport.go",
		"webhook_decode.go", "webhook_report.go", "webhook_rules.go", "webhook_sender.go",
		"webhook_time.go",
	}, []string{"."}},
	{"./pgstore", []string{"pgstore.go", "fulfil_tx.go", "fulfil_pgx.go", "hook_tx.go", "watch_store.go"}, []string{"./pgstore"}},
	{"./watch", []string{"watch.go", "memory.go", "schedule.go"}, []string{"./watch"}},
}

// moneyPackage is a package, the files of it the run mutates, and the
// packages whose tests may catch its mutants.
type moneyPackage struct {
	pkg   string
	files []string
	tests []string
}

// testPackages lists, in order, every package whose tests the run uses.
func testPackages() []string {
	var all []string
	for _, p := range moneyPath {
		for _, t := range p.tests {
			if !slices.Contains(all, t) {
				all = append(all, t)
			}
		}
	}
	return all
}

// testsOf lists the test packages of the money-path package pkg.
func testsOf(pkg string) []string {
	for _, p := range moneyPath {
		if p.pkg == pkg {
			return p.tests
		}
	}
	return nil
}

// mustHappen names the functions and methods whose call, as a statement,
// the run removes: releasing, completing, committing, closing, cancelling.
var mustHappen = map[string]bool{
	"Commit": true, "Rollback": true, "Release": true, "Complete": true, "Close": true,
	"Unlock": true, "RUnlock": true, "Done": true, "Stop": true, "Wait": true, "Flush": true,
	"cancel": true, "put": true, "Purge": true, "release": true, "complete": true, "renew": true,
}

// schemaFile is the file the run adds to each mutated package.
const schemaFile = "zz_mutant_schema.go"

// schemaSource is its text: the active mutant, read once from the
// environment, and the two helpers the mutated spots call.
const schemaSource = `package %s

import (
	"os"
	"strconv"
)

var mutantActive, _ = strconv.Atoi(os.Getenv("PAYGATE_MUTANT"))

func mutantOn(n int) bool { return mutantActive == n }

func mutantPick[T any](n int, orig, mut T) T {
	if mutantActive == n {
		return mut
	}
	return orig
}
`

// spot is one generated mutant.
type spot struct {
	id        int
	pkg, file string // file relative to the repository
	decl      string // the declaration it is in: f, (*T).m or T.m
	line      int
	anchor    int    // the line of the statement that evaluates it (for a case's expression, its switch)
	kind      string // what the mutant does
	orig      string // the source line, trimmed
	node      string // the mutated code; with pkg, decl, kind and orig, the mutant's key in equivalent.tsv
	start     int    // byte offsets of the edit in the original file
	end       int
	text      string // the schema's text for [start, end): idMark for its number, origMark for the original text
}

// The marks in a spot's text.
const (
	idMark   = "\x01"
	origMark = "\x00"
)

// key identifies a spot across runs, line moves and moves of its
// declaration to another file of its package.
func (s spot) key() string {
	return strings.Join([]string{pkgName(s.pkg), s.decl, s.kind, s.orig, s.node}, "\t")
}

// pkgName is a package's directory as the catalogues write it: "." for the
// root, "internal/signing" for ./internal/signing.
func pkgName(pkg string) string {
	if pkg == "." {
		return pkg
	}
	return strings.TrimPrefix(pkg, "./")
}

// generate lists the spots of every money-path file in dir (the scratch
// copy), numbering them from 1.
func generate(dir string) ([]spot, error) {
	var all []spot
	for _, p := range moneyPath {
		spots, err := generatePackage(dir, p.pkg, p.files)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.pkg, err)
		}
		all = append(all, spots...)
	}
	for i := range all {
		all[i].id = i + 1
	}
	return all, nil
}

// generatePackage type-checks the package at dir/pkg and lists the spots
// of its files named in files.
func generatePackage(dir, pkg string, files []string) ([]spot, error) {
	fset := token.NewFileSet()
	pdir := filepath.Join(dir, pkg)
	bp, err := build.ImportDir(pdir, 0) // the files this platform builds
	if err != nil {
		return nil, err
	}
	var astFiles []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pdir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		astFiles = append(astFiles, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	checked, err := conf.Check(pkg, fset, astFiles, info)
	if err != nil {
		return nil, err
	}
	var spots []spot
	for _, f := range astFiles {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		if !slices.Contains(files, name) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(pdir, name))
		if err != nil {
			return nil, err
		}
		g := &generator{fset: fset, info: info, pkg: checked, file: f, src: src,
			rel: filepath.ToSlash(filepath.Join(pkg, name)), pkgPath: pkg}
		g.walk()
		spots = append(spots, g.spots...)
	}
	// By file, then start; on the same start the outer spot first.
	sort.SliceStable(spots, func(i, j int) bool {
		a, b := spots[i], spots[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.start != b.start {
			return a.start < b.start
		}
		return a.end > b.end
	})
	return spots, nil
}

// generator walks one file and collects its spots.
type generator struct {
	fset    *token.FileSet
	info    *types.Info
	pkg     *types.Package
	file    *ast.File
	src     []byte
	rel     string
	pkgPath string
	spots   []spot
	decl    string // the declaration being walked
	// unread are constants no caller reads (see noteUnread).
	unread map[ast.Node]bool
}

// comparisons maps each comparison to its negation and, for the ordered
// ones, to its shift by one.
var comparisons = map[token.Token]struct{ flip, shift token.Token }{
	token.LSS: {token.GEQ, token.LEQ}, token.LEQ: {token.GTR, token.LSS},
	token.GTR: {token.LEQ, token.GEQ}, token.GEQ: {token.LSS, token.GTR},
	token.EQL: {token.NEQ, token.ILLEGAL}, token.NEQ: {token.EQL, token.ILLEGAL},
}

// walk visits the function bodies of the file (constant and type
// declarations are left alone: their values must stay constant).
func (g *generator) walk() {
	for _, d := range g.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		g.decl = funcName(fn)
		ast.Inspect(fn.Body, g.visit)
	}
	g.anchor()
}

// anchor sets each spot's anchor: the line of the innermost statement
// that holds it, a case clause aside (its expressions are evaluated by
// its switch). A test runs that line whenever it evaluates the spot, while
// the spot's own line may belong to a block only some of those tests
// enter (a case's body starts on its case's line).
func (g *generator) anchor() {
	var stmts []ast.Node
	ast.Inspect(g.file, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.CaseClause, *ast.CommClause, *ast.BlockStmt:
		case ast.Stmt:
			stmts = append(stmts, n)
		}
		return true
	})
	for i, sp := range g.spots {
		best := -1
		for j, st := range stmts {
			if g.offset(st.Pos()) <= sp.start && sp.end <= g.offset(st.End()) &&
				(best < 0 || st.End()-st.Pos() < stmts[best].End()-stmts[best].Pos()) {
				best = j
			}
		}
		g.spots[i].anchor = sp.line
		if best >= 0 {
			g.spots[i].anchor = g.fset.Position(stmts[best].Pos()).Line
		}
	}
}

// visit adds the spots of one node.
func (g *generator) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.GenDecl:
		return n.Tok == token.VAR // a local const or type stays as it is
	case *ast.ArrayType:
		return false // its length must stay constant
	case *ast.CompositeLit:
		g.compositeElements(n)
		return false
	case *ast.BinaryExpr:
		g.binary(n)
	case *ast.IfStmt:
		g.condition(n.Cond)
		g.droppedReturns(n)
	case *ast.ForStmt:
		if n.Cond != nil {
			g.condition(n.Cond)
		}
	case *ast.BasicLit:
		g.constant(n)
	case *ast.ExprStmt:
		g.removedCall(n)
	case *ast.ReturnStmt, *ast.CallExpr:
		g.noteUnread(n)
	}
	return true
}

// compositeElements visits a composite literal's values, not its keys (an
// array's keys must stay constant).
func (g *generator) compositeElements(c *ast.CompositeLit) {
	for _, e := range c.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok && !g.isMap(c) {
			e = kv.Value
		}
		ast.Inspect(e, g.visit)
	}
}

// isMap reports whether a composite literal is a map's (whose keys may be
// any expression).
func (g *generator) isMap(c *ast.CompositeLit) bool {
	tv, ok := g.info.Types[c]
	if !ok {
		return false
	}
	_, m := tv.Type.Underlying().(*types.Map)
	return m
}

// constantExpr reports whether e is a constant expression (its mutants
// would need it to stay constant, or change nothing).
func (g *generator) constantExpr(e ast.Expr) bool {
	tv, ok := g.info.Types[e]
	return ok && tv.Value != nil
}

// binary adds a comparison's flip and shift, and the negation of the
// operands of && and || that are not comparisons themselves.
func (g *generator) binary(b *ast.BinaryExpr) {
	if b.Op == token.LAND || b.Op == token.LOR {
		g.condition(b.X)
		g.condition(b.Y)
		return
	}
	c, ok := comparisons[b.Op]
	if !ok || g.constantExpr(b) {
		return
	}
	g.add(b, "flip "+b.Op.String()+" to "+c.flip.String(), "(("+origMark+") != mutantOn("+idMark+"))")
	if c.shift != token.ILLEGAL && pure(b.X) && pure(b.Y) {
		g.add(b, "shift "+b.Op.String()+" to "+c.shift.String(),
			"mutantPick("+idMark+", "+origMark+", ("+g.source(b.X)+") "+c.shift.String()+" ("+g.source(b.Y)+"))")
	}
}

// condition negates a boolean condition that is not a comparison nor an
// && or || (whose parts have their own mutants).
func (g *generator) condition(e ast.Expr) {
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok {
		if _, cmp := comparisons[b.Op]; cmp || b.Op == token.LAND || b.Op == token.LOR {
			return
		}
	}
	if g.constantExpr(e) {
		return
	}
	g.add(e, "negate condition", "(("+origMark+") != mutantOn("+idMark+"))")
}

// droppedReturns drops each return in the body of an if without else that
// handles an error (its condition or its results name err).
func (g *generator) droppedReturns(s *ast.IfStmt) {
	if s.Else != nil || !mentionsErr(s.Cond) {
		return
	}
	for _, st := range s.Body.List {
		r, ok := st.(*ast.ReturnStmt)
		if !ok {
			continue
		}
		g.add(r, "drop return", "if !mutantOn("+idMark+") { "+origMark+" }")
	}
}

// mentionsErr reports whether e names an identifier err.
func mentionsErr(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "err" {
			found = true
		}
		return !found
	})
	return found
}

// noteUnread marks the constants whose value nothing reads, so that
// moving them changes no behaviour: a value returned beside an error that
// is not nil or beside a false ok (by the house's convention no caller
// reads it), and a capacity or map size hint given to make (room only).
func (g *generator) noteUnread(n ast.Node) {
	if g.unread == nil {
		g.unread = map[ast.Node]bool{}
	}
	switch n := n.(type) {
	case *ast.ReturnStmt:
		if len(n.Results) < 2 {
			return
		}
		if !g.failure(n.Results[len(n.Results)-1]) {
			return
		}
		for _, r := range n.Results[:len(n.Results)-1] {
			g.markUnread(r)
		}
	case *ast.CallExpr:
		id, ok := n.Fun.(*ast.Ident)
		if !ok || id.Name != "make" || len(n.Args) < 2 {
			return
		}
		_, isMap := g.info.Types[n.Args[0]].Type.Underlying().(*types.Map)
		if len(n.Args) == 3 || isMap {
			g.markUnread(n.Args[len(n.Args)-1])
		}
	}
}

// failure reports whether e, a function's last result, says the call
// failed: an error that is not nil, or the constant false.
func (g *generator) failure(e ast.Expr) bool {
	if id, ok := e.(*ast.Ident); ok && (id.Name == "nil" || id.Name == "false") {
		return id.Name == "false"
	}
	tv, ok := g.info.Types[e]
	return ok && types.Identical(tv.Type, types.Universe.Lookup("error").Type())
}

// markUnread marks every constant in e.
func (g *generator) markUnread(e ast.Expr) {
	ast.Inspect(e, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok {
			g.unread[l] = true
		}
		return true
	})
}

// constant moves an integer constant by one, typed as the code uses it.
func (g *generator) constant(l *ast.BasicLit) {
	if l.Kind != token.INT || g.unread[l] {
		return
	}
	tv, ok := g.info.Types[l]
	if !ok {
		return
	}
	basic, isBasic := tv.Type.Underlying().(*types.Basic)
	if !isBasic || basic.Info()&types.IsInteger == 0 || basic.Info()&types.IsUntyped != 0 {
		return
	}
	typ := types.TypeString(tv.Type, g.qualifier)
	g.add(l, "constant +1", "mutantPick["+typ+"]("+idMark+", "+origMark+", "+l.Value+"+1)")
}

// qualifier names another package as this file imports it.
func (g *generator) qualifier(p *types.Package) string {
	if p == g.pkg {
		return ""
	}
	for _, imp := range g.file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path == p.Path() && imp.Name != nil {
			return imp.Name.Name
		}
	}
	return p.Name()
}

// removedCall removes a call statement of a must-happen function.
func (g *generator) removedCall(s *ast.ExprStmt) {
	call, ok := s.X.(*ast.CallExpr)
	if !ok {
		return
	}
	name := ""
	switch f := call.Fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	if !mustHappen[name] {
		return
	}
	g.add(s, "remove call "+name, "if !mutantOn("+idMark+") { "+origMark+" }")
}

// pure reports whether evaluating e twice is the same as once: names,
// selectors, literals, indexing and arithmetic of those, len and cap.
func pure(e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, isIdent := n.Fun.(*ast.Ident); !isIdent || id.Name != "len" && id.Name != "cap" {
				ok = false
			}
		case *ast.UnaryExpr:
			ok = ok && n.Op != token.ARROW
		case *ast.FuncLit:
			ok = false
		}
		return ok
	})
	return ok
}

// source is the text of n.
func (g *generator) source(n ast.Node) string {
	return string(g.src[g.offset(n.Pos()):g.offset(n.End())])
}

func (g *generator) offset(p token.Pos) int { return g.fset.Position(p).Offset }

// add records a spot replacing n by text (see spot.text).
func (g *generator) add(n ast.Node, kind, text string) {
	pos := g.fset.Position(n.Pos())
	line := strings.TrimSpace(strings.SplitN(string(g.src[pos.Offset-pos.Column+1:]), "\n", 2)[0])
	g.spots = append(g.spots, spot{pkg: g.pkgPath, file: g.rel, decl: g.decl, line: pos.Line, kind: kind, orig: line,
		node: strings.Join(strings.Fields(g.source(n)), " "), start: g.offset(n.Pos()), end: g.offset(n.End()), text: text})
}
