package market

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// What each service asks of the store, read from its methods' calls
// (tx.Role.Method), is the table docs/architecture.md gives: a service
// that starts asking another role changes the map with it. core and the
// package's functions, which the services share, are listed as such.
func TestServicesAskTheStoreForTheirRoles(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| roles: ([A-Za-z, ]+) \\|")
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		want[m[1]] = strings.Split(m[2], ", ")
	}
	if len(want) == 0 {
		t.Fatal("docs/architecture.md has no table of roles")
	}
	got := rolesByReceiver(t)
	for recv, roles := range got {
		if !slices.Equal(roles, want[recv]) {
			t.Errorf("%s asks the store for %v; docs/architecture.md says %v", recv, roles, want[recv])
		}
	}
	for recv := range want {
		if got[recv] == nil {
			t.Errorf("docs/architecture.md lists %s, which asks the store for nothing", recv)
		}
	}
}

// rolesByReceiver reads the package's own files: for each receiver type
// ("func" for plain functions), the roles of crtx.Tx it names, sorted.
func rolesByReceiver(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	seen := map[string]map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			recv := "func"
			if fd.Recv != nil {
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					recv = id.Name
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if role, ok := sel.X.(*ast.SelectorExpr); ok {
					if id, ok := role.X.(*ast.Ident); ok && id.Name == "tx" {
						if seen[recv] == nil {
							seen[recv] = map[string]bool{}
						}
						seen[recv][role.Sel.Name] = true
					}
				}
				return true
			})
		}
	}
	out := map[string][]string{}
	for recv, roles := range seen {
		for r := range roles {
			out[recv] = append(out[recv], r)
		}
		slices.Sort(out[recv])
	}
	return out
}
