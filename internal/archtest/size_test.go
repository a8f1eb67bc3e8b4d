package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits of the house (issue 15): a newcomer reads a file in one sitting and a function
// on one screen. Tests and generated files are exempt; so are functions that are tables.
const (
	maxFileLines = 400
	maxFuncLines = 80
)

// TestSizes fails naming every non-test Go file of the module over maxFileLines and every
// function over maxFuncLines, unless its body is a single table (a return or assignment of one
// composite literal).
func TestSizes(t *testing.T) {
	fset := token.NewFileSet()
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s has %d lines, want at most %d: split it by concept", rel, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || isTable(fd.Body) {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: func %s has %d lines, want at most %d", rel, funcName(fd), n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isTable reports whether a body only returns or assigns one composite literal.
func isTable(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	var expr ast.Expr
	switch s := body.List[0].(type) {
	case *ast.ReturnStmt:
		if len(s.Results) == 1 {
			expr = s.Results[0]
		}
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			expr = s.Rhs[0]
		}
	}
	_, ok := expr.(*ast.CompositeLit)
	return ok
}

// funcName is Recv.Name or Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
