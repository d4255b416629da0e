//go:build unix

package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Verdicts of the mechanical run, besides caught, survived and timeout.
const (
	uncovered     = "uncovered"      // no test that may catch it runs the line
	notApplicable = "not-applicable" // the compiler refuses it in the schema
	equivalent    = "equivalent"     // survived, and listed in equivalent.tsv
)

// equivalents lists the survivors that change no behaviour: package,
// declaration, kind, the source line (trimmed), the mutated code and why,
// tab-separated (the verdicts file has the same columns after its first
// two).
//
//go:embed equivalent.tsv
var equivalents string

// equivalentFile names it in messages.
const equivalentFile = "tools/mutation/equivalent.tsv"

// mechanicalRun generates the mutants of the money path, builds their
// schema in a scratch copy of the working tree, runs each against the tests
// that cover it, writes every verdict to out and prints the score. It fails
// when a survivor is not explained in equivalentFile.
func mechanicalRun(pkgs, run string, limit time.Duration, out string, havePG, list bool) error {
	if err := choosePackages(pkgs, havePG || list); err != nil { // a list builds, it runs nothing
		return err
	}
	start := time.Now()
	dir, err := scratchCopy("")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if list {
		return listSpots(dir, run)
	}
	m := &mechanical{dir: dir, limit: limit, covered: map[string]map[string][]string{}}
	for _, pkg := range testPackages() {
		lines, err := coverage(dir, pkg, 5*limit)
		if err != nil {
			return fmt.Errorf("%s: %w", pkg, err)
		}
		m.covered[pkg] = lines
		fmt.Printf("coverage by each test of %s: %d lines run (%.0f s)\n", pkg, len(lines), time.Since(start).Seconds())
	}
	spots, err := generate(dir)
	if err != nil {
		return err
	}
	if spots, err = chooseSpots(spots, run); err != nil {
		return err
	}
	fmt.Printf("%d mutants generated\n", len(spots))
	kept, refused, bins, err := buildSchema(".", dir, spots)
	if err != nil {
		return err
	}
	m.bins = bins
	if m.equiv, err = readEquivalents(); err != nil {
		return err
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	defer w.Close()
	counts, unexplained := m.judgeAll(w, kept, refused)
	fmt.Printf("\nmechanical score: %d generated, %d not applicable, %d caught, %d equivalent, %d survived, %d uncovered, %d timeout; %.0f s\n",
		len(spots), counts[notApplicable], counts[caught], counts[equivalent], counts[survived], counts[uncovered], counts[timedOut], time.Since(start).Seconds())
	fmt.Printf("verdicts: %s\n", out)
	if len(unexplained) > 0 {
		return fmt.Errorf("%d survivors not explained in %s:\n%s", len(unexplained), equivalentFile, strings.Join(unexplained, "\n"))
	}
	return nil
}

// choosePackages keeps in moneyPath the packages matching pkgs, and
// ./pgstore only with PostgreSQL.
func choosePackages(pkgs string, havePG bool) error {
	only, err := regexp.Compile(pkgs)
	if err != nil {
		return fmt.Errorf("-pkgs: %w", err)
	}
	moneyPath = slices.DeleteFunc(moneyPath, func(p moneyPackage) bool { return !only.MatchString(p.pkg) })
	if !havePG {
		moneyPath = slices.DeleteFunc(moneyPath, func(p moneyPackage) bool { return p.pkg == "./pgstore" })
		fmt.Println("no PAYGATE_TEST_POSTGRES_DSN: ./pgstore is left out")
	}
	return nil
}

// mechanical is the state of one mechanical run.
type mechanical struct {
	dir     string
	limit   time.Duration
	covered map[string]map[string][]string // test package → file:line → tests
	bins    map[string]string              // test package → its schema's test binary
	equiv   map[string]string              // spot key → why it is equivalent
}

// judgeAll writes every spot's verdict to w and counts them; it returns
// the survivors equivalent.tsv does not explain.
func (m *mechanical) judgeAll(w io.Writer, kept, refused []spot) (map[string]int, []string) {
	counts := map[string]int{notApplicable: len(refused)}
	for _, s := range refused {
		fmt.Fprintf(w, "%s\t%s:%d\t%s\t\n", notApplicable, s.file, s.line, s.key())
	}
	var unexplained []string
	for _, s := range kept {
		verdict, detail := m.judge(s)
		if verdict == survived || verdict == uncovered {
			if why, ok := m.equiv[s.key()]; ok {
				verdict, detail = equivalent, why
			} else {
				unexplained = append(unexplained, fmt.Sprintf("%s %s:%d %s: %s [%s]", verdict, s.file, s.line, s.kind, s.orig, s.node))
			}
		}
		counts[verdict]++
		fmt.Fprintf(w, "%s\t%s:%d\t%s\t%s\n", verdict, s.file, s.line, s.key(), detail)
	}
	return counts, unexplained
}

// judge runs the tests that cover s, package by package, until one
// catches it.
func (m *mechanical) judge(s spot) (string, string) {
	verdict, detail := uncovered, ""
	for _, pkg := range testsOf(s.pkg) {
		lines := m.covered[pkg]
		tests := union(lines[s.file+":"+strconv.Itoa(s.line)], lines[s.file+":"+strconv.Itoa(s.anchor)])
		if len(tests) == 0 {
			continue
		}
		if verdict, detail = runSpot(m.dir, m.bins[pkg], pkg, s.id, tests, m.limit); verdict != survived {
			break
		}
	}
	return verdict, detail
}

// listSpots generates the mutants, builds their schema, and prints how
// many of each kind there are and how many the compiler refused: the check
// CI runs that the mechanical run still works.
func listSpots(dir, run string) error {
	spots, err := generate(dir)
	if err != nil {
		return err
	}
	if spots, err = chooseSpots(spots, run); err != nil {
		return err
	}
	kept, refused, _, err := buildSchema(".", dir, spots)
	if err != nil {
		return err
	}
	kinds := map[string]int{}
	for _, s := range kept {
		kinds[strings.Fields(s.kind)[0]]++
	}
	fmt.Printf("%d mutants generated, %d built into the schema (%v), %d refused by the compiler\n", len(spots), len(kept), kinds, len(refused))
	return nil
}

// union is a's tests and those of b that a lacks, in order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, t := range b {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// chooseSpots keeps the spots whose file, kind or line match run.
func chooseSpots(spots []spot, run string) ([]spot, error) {
	if run == "" {
		return spots, nil
	}
	only, err := regexp.Compile(run)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	return slices.DeleteFunc(spots, func(s spot) bool {
		return !only.MatchString(fmt.Sprintf("%s:%d %s %s", s.file, s.line, s.kind, s.orig))
	}), nil
}

// runSpot runs the tests of pkg that cover mutant id, with it active, and
// says whether one failed (caught), all passed (survived) or the limit
// passed.
func runSpot(dir, bin, pkg string, id int, tests []string, limit time.Duration) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^("+strings.Join(tests, "|")+")$",
		"-test.count=1", "-test.failfast", "-test.v", "-test.skip", soak)
	cmd.Dir = filepath.Join(dir, pkg)
	cmd.Env = append(os.Environ(), "PAYGATE_MUTANT="+strconv.Itoa(id))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return timedOut, ""
	case err != nil:
		return caught, "by " + firstFailure(string(out))
	}
	return survived, ""
}

// readEquivalents reads equivalents: the key of each survivor judged
// equivalent, with the reason.
func readEquivalents() (map[string]string, error) {
	out := map[string]string{}
	for n, line := range strings.Split(equivalents, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 6 || parts[5] == "" {
			return nil, fmt.Errorf("%s:%d: want package, declaration, kind, line, code and reason, tab-separated", equivalentFile, n+1)
		}
		out[strings.Join(parts[:5], "\t")] = parts[5]
	}
	return out, nil
}
