//go:build unix

package main

// The schema of the mechanical run: every generated mutant compiled into
// one build of each package, switched on by its number (mechanical.go).

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// span is where a spot's text lies in a rewritten file: first and last
// line and column.
type span struct{ line0, col0, line1, col1 int }

// writeSchema rewrites the mutated files of dir with every spot of spots,
// nested as they fall, adds schemaFile to each package, and returns, per
// rewritten file, where each spot's text lies, so that a compiler error can
// be traced back to its spot.
func writeSchema(dir string, spots []spot) (map[string]map[int]span, error) {
	byFile := map[string][]spot{}
	for _, s := range spots {
		byFile[s.file] = append(byFile[s.file], s)
	}
	where := map[string]map[int]span{}
	for file, fs := range byFile {
		src, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		r := &rewriter{src: src, at: map[int]span{}}
		r.emit(0, len(src), fs)
		if err := os.WriteFile(filepath.Join(dir, file), r.out.Bytes(), 0o644); err != nil {
			return nil, err
		}
		where[file] = r.at
	}
	for _, p := range moneyPath {
		name, err := packageName(filepath.Join(dir, p.pkg))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, p.pkg, schemaFile), fmt.Appendf(nil, schemaSource, name), 0o644); err != nil {
			return nil, err
		}
	}
	return where, nil
}

// rewriter writes a file's schema.
type rewriter struct {
	src []byte
	out bytes.Buffer
	at  map[int]span
}

// emit writes src[lo:hi] with the spots (sorted by start, outer before
// inner) applied: a spot on the same range as the one before, or inside
// it, is applied to that one's original text.
func (r *rewriter) emit(lo, hi int, spots []spot) {
	pos := lo
	for i := 0; i < len(spots); {
		s := spots[i]
		j := i + 1
		for j < len(spots) && spots[j].start < s.end {
			j++
		}
		r.out.Write(r.src[pos:s.start])
		l0, c0 := lineCol(r.out.Bytes())
		head, tail, _ := strings.Cut(strings.ReplaceAll(s.text, idMark, strconv.Itoa(s.id)), origMark)
		r.out.WriteString(head)
		r.emit(s.start, s.end, spots[i+1:j])
		r.out.WriteString(tail)
		l1, c1 := lineCol(r.out.Bytes())
		r.at[s.id] = span{l0, c0, l1, c1}
		pos = s.end
		i = j
	}
	r.out.Write(r.src[pos:hi])
}

// lineCol is the line and column just after b.
func lineCol(b []byte) (int, int) {
	line := bytes.Count(b, []byte("\n")) + 1
	return line, len(b) - bytes.LastIndexByte(b, '\n')
}

// packageName reads the package clause of a directory's Go files.
func packageName(dir string) (string, error) {
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return "", err
	}
	return bp.Name, nil
}

// compileErr matches a compiler error's position.
var compileErr = regexp.MustCompile(`(?m)^\s*(?:\./)?([\w./-]+\.go):(\d+):(\d+): `)

// buildSchema writes the schema of spots into the scratch copy dir (from
// the pristine copy clean), builds the test binary of each test package
// and drops the spots the compiler refuses, until all build. It returns
// the spots that build, the refused ones, and the binaries by test
// package.
func buildSchema(clean, dir string, spots []spot) ([]spot, []spot, map[string]string, error) {
	var refused []spot
	for round := 0; ; round++ {
		if err := restore(clean, dir); err != nil {
			return nil, nil, nil, err
		}
		where, err := writeSchema(dir, spots)
		if err != nil {
			return nil, nil, nil, err
		}
		bins := map[string]string{}
		bad := map[int]bool{}
		for _, pkg := range testPackages() {
			bin := filepath.Join(dir, "mutant-"+strings.NewReplacer(".", "_", "/", "_").Replace(pkg)+".test")
			cmd := exec.Command("go", "test", "-c", "-vet=off", "-o", bin, pkg)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil {
				bins[pkg] = bin
				continue
			}
			found := 0
			for _, m := range compileErr.FindAllStringSubmatch(string(out), -1) {
				line, _ := strconv.Atoi(m[2])
				col, _ := strconv.Atoi(m[3])
				if id := spotAt(where[filepath.ToSlash(filepath.Clean(m[1]))], line, col); id > 0 {
					bad[id] = true
					found++
				}
			}
			if found == 0 {
				return nil, nil, nil, fmt.Errorf("the schema of %s does not build, and the errors name no spot:\n%s", pkg, out)
			}
		}
		if len(bad) == 0 {
			return spots, refused, bins, nil
		}
		if round == 20 {
			return nil, nil, nil, errors.New("the schema still does not build after 20 rounds")
		}
		kept := spots[:0:0]
		for _, s := range spots {
			if bad[s.id] {
				refused = append(refused, s)
			} else {
				kept = append(kept, s)
			}
		}
		fmt.Printf("schema round %d: %d spots refused by the compiler\n", round+1, len(bad))
		spots = kept
	}
}

// spotAt is the innermost spot whose text holds line:col, or 0.
func spotAt(at map[int]span, line, col int) int {
	best, bestStart := 0, [2]int{-1, -1}
	for id, sp := range at {
		after := line > sp.line0 || line == sp.line0 && col >= sp.col0
		before := line < sp.line1 || line == sp.line1 && col <= sp.col1
		start := [2]int{sp.line0, sp.col0}
		if after && before && (start[0] > bestStart[0] || start[0] == bestStart[0] && start[1] > bestStart[1]) {
			best, bestStart = id, start
		}
	}
	return best
}

// restore makes dir's money-path packages as in clean again.
func restore(clean, dir string) error {
	for _, p := range moneyPath {
		os.Remove(filepath.Join(dir, p.pkg, schemaFile))
		for _, f := range p.files {
			data, err := os.ReadFile(filepath.Join(clean, p.pkg, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, p.pkg, f), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
