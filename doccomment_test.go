package paygate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every exported name of every package in the module, and every exported
// field of an exported struct, has a doc comment; every package has one
// too.
func TestEveryExportedNameIsDocumented(t *testing.T) {
	var missing []string
	packageDoc := map[string]bool{} // by directory: has a package comment
	for _, f := range repoFiles(t, ".go") {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "e2e/") {
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(f)
		packageDoc[dir] = packageDoc[dir] || file.Doc != nil
		missing = append(missing, undocumented(fset, f, file)...)
	}
	for dir, ok := range packageDoc {
		if !ok {
			missing = append(missing, dir+": the package has no package comment")
		}
	}
	for _, m := range missing {
		t.Error(m)
	}
}

// undocumented lists a file's exported names and fields without a comment.
func undocumented(fset *token.FileSet, name string, file *ast.File) []string {
	var out []string
	report := func(pos token.Pos, what string) {
		out = append(out, fset.Position(pos).String()+": "+what+" has no doc comment")
	}
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && d.Doc == nil && (d.Recv == nil || exportedRecv(d.Recv)) {
				report(d.Pos(), d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if s.Doc == nil && d.Doc == nil {
						report(s.Pos(), "type "+s.Name.Name)
					}
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, f := range st.Fields.List {
							for _, n := range f.Names {
								if n.IsExported() && f.Doc == nil && f.Comment == nil {
									report(n.Pos(), s.Name.Name+"."+n.Name)
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
							report(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	t := fl.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
