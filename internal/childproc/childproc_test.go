package childproc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryChildGetsEnviron checks storbench's code (not its tests, nor the test
// harnesses that start throwaway servers) for programs started with os/exec: each
// function that starts one must give it an environment (Command does; otherwise
// cmd.Env = Environ()). A child left with the inherited environment holds
// $STORBENCH_DSN, $PGPASSWORD and a study's password_env, readable in
// /proc/PID/environ by the child's user: Debian's pg_config, a shell script run to
// find PostgreSQL, did. TestSecretsNeverWritten (cmd/storbench) sees such a child only
// if it samples /proc while the child runs; this sees the code.
func TestEveryChildGetsEnviron(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "internal/testsupport" || rel == "bench" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var starts []token.Pos
			setsEnv := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "exec" && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext") {
							starts = append(starts, n.Pos())
						}
					}
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Env" {
							setsEnv = true
						}
					}
				}
				return true
			})
			checked += len(starts)
			if len(starts) > 0 && !setsEnv {
				for _, p := range starts {
					t.Errorf("%s: a program started with the inherited environment: use childproc.Command, or set cmd.Env = childproc.Environ()", fset.Position(p))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no program started with os/exec: the walk looked in the wrong place")
	}
	t.Logf("%d programs started with os/exec, each with an environment of its own", checked)
}
