package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExportedNames(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"a func and a lower-case one", "func F() {}\nfunc f() {}", 1},
		{"an exported type and its methods", "type T struct{}\nfunc (T) A() {}\nfunc (*T) B() {}\nfunc (T) c() {}", 3},
		{"methods of an unexported type", "type t struct{}\nfunc (t) A() {}", 0},
		{"consts and vars, one by one", "const (A = 1; b = 2; C = 3)\nvar X, y, Z int", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte("package p\n"+tt.src+"\n"), 0o644))
			n, err := exportedNames(dir, map[string]int{"x.go": 0})
			require.NoError(t, err)
			require.Equal(t, tt.want, n)
		})
	}
}

func TestScanLeavesOutNestedModulesAndTestdata(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"a.go":                "package p\n\nfunc A() {}\n",
		"a_test.go":           "package p\n",
		"sub/b.go":            "package sub\n",
		"testdata/c.go":       "package c\n",
		"tools/go.mod":        "module x\n",
		"tools/d.go":          "package d\n",
		"sub/sub_test.go":     "package sub\n",
		"sub/testdata/e.go":   "package e\n",
		".hidden/f.go":        "package f\n",
		"sub/deeper/g.go":     "package g\n\n\n",
		"sub/deeper/notgo.md": "x\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	pkgs, err := scan(root)
	require.NoError(t, err)
	require.Equal(t, map[string]*pkgFiles{
		".":          {lines: map[string]int{"a.go": 3}, tests: 1},
		"sub":        {lines: map[string]int{"b.go": 1}, tests: 1},
		"sub/deeper": {lines: map[string]int{"g.go": 3}},
	}, pkgs)
}
