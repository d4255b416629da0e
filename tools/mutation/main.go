//go:build unix

// Command mutation is the money path's mutation check (tools/mutation.sh):
// it plants each defect of its catalogue (defects.tsv) in a scratch copy of
// the repository, one at a time, runs the tests of the packages that must
// catch it under a hard time limit, and prints caught, survived, timeout or
// error with the seconds it took. A defect is found by package,
// declaration, pattern and which match (defects.go), not by file or exact
// text; one that no longer locates is an error, never counted as caught.
// The repository itself is never changed. It runs on unix systems: a test
// run that overruns is killed with its whole process group.
//
// Usage (anywhere in the repository):
//
//	go run ./mutation [-rev main] [-run regexp] [-limit 60s] [-list] [-check]
//
// PAYGATE_TEST_POSTGRES_DSN must be set: the pgstore mutants need
// PostgreSQL, and without it they would survive for want of a database.
// -no-postgres skips them instead, and says so.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Outcomes of one mutant.
const (
	caught   = "caught"
	survived = "survived"
	timedOut = "timeout"
	failed   = "error"
	skipped  = "skipped"
)

func main() {
	rev := flag.String("rev", "", "test the mutants against this git revision instead of the working tree")
	run := flag.String("run", "", "only the mutants whose name matches this regexp")
	limit := flag.Duration("limit", 60*time.Second, "hard time limit of one mutant's test run")
	list := flag.Bool("list", false, "list the defects and where each applies, and exit (with -mechanical: generate the mutants, build their schema, and print the counts)")
	locateOnly := flag.Bool("check", false, "only print the defects that no longer locate, and their count; exits 0 whatever the count")
	noPG := flag.Bool("no-postgres", false, "skip the pgstore mutants when PAYGATE_TEST_POSTGRES_DSN is not set")
	mechanical := flag.Bool("mechanical", false, "generate the mutants from the money path's code instead of the table (mechanical.go); -run then matches file:line, kind and source line")
	out := flag.String("out", "mutation-verdicts.tsv", "with -mechanical: where to write every mutant's verdict")
	pkgs := flag.String("pkgs", "", "with -mechanical: only the money-path packages matching this regexp (./internal/signing, ./internal/memstore, ., ./pgstore)")
	flag.Parse()
	if err := toRepositoryRoot(); err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		os.Exit(1)
	}
	if *mechanical {
		havePG := os.Getenv("PAYGATE_TEST_POSTGRES_DSN") != ""
		if !havePG && !*noPG && !*list {
			fmt.Fprintln(os.Stderr, "mutation: PAYGATE_TEST_POSTGRES_DSN is not set: pass -no-postgres to leave ./pgstore out")
			os.Exit(1)
		}
		if err := mechanicalRun(*pkgs, *run, *limit, *out, havePG, *list || *locateOnly); err != nil {
			fmt.Fprintln(os.Stderr, "mutation:", err)
			os.Exit(1)
		}
		return
	}
	if err := check(*rev, *run, *limit, *list, *locateOnly, *noPG); err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		os.Exit(1)
	}
}

// toRepositoryRoot makes the repository's top directory the working
// directory: the catalogue names packages from there.
func toRepositoryRoot() error {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("git rev-parse --show-toplevel (run it inside the repository): %w", err)
	}
	return os.Chdir(strings.TrimSpace(string(out)))
}

// check runs the whole mutation check; it fails when any defect is not
// caught or cannot be applied. With list or locateOnly it only reports
// where the defects apply.
func check(rev, run string, limit time.Duration, list, locateOnly, noPG bool) error {
	chosen, err := choose(run)
	if err != nil {
		return err
	}
	if list || locateOnly {
		listDefects(chosen, locateOnly)
		return nil
	}
	havePG := os.Getenv("PAYGATE_TEST_POSTGRES_DSN") != ""
	if !havePG && !noPG {
		return errors.New("PAYGATE_TEST_POSTGRES_DSN is not set: the pgstore mutants need PostgreSQL (TESTING.md), or pass -no-postgres to skip them")
	}
	fmt.Printf("PostgreSQL (PAYGATE_TEST_POSTGRES_DSN): %t\n", havePG)
	dir, err := scratchCopy(rev)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("scratch copy of %s: %s\n", describe(rev), dir)

	// The unmutated tree must pass, or every mutant would look caught.
	if res, secs, out := goTest(dir, packagesOf(chosen, havePG), 5*limit); res != survived {
		return fmt.Errorf("the unmutated tests do not pass (%s after %.1f s):\n%s", res, secs, failures(out))
	}
	return tryAll(dir, chosen, limit, havePG)
}

// choose returns the defects of the catalogue whose name matches the
// regexp run.
func choose(run string) ([]defect, error) {
	only, err := regexp.Compile(run)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	all, err := parseCatalogue(catalogue)
	if err != nil {
		return nil, err
	}
	var chosen []defect
	for _, m := range all {
		if only.MatchString(m.name) {
			chosen = append(chosen, m)
		}
	}
	return chosen, nil
}

// listDefects prints each defect, where it applies and the file it is in
// today; with missing, only those that no longer locate. Either way it ends
// with how many do not locate.
func listDefects(chosen []defect, missing bool) {
	bad := 0
	for _, d := range chosen {
		at, err := locate(".", d)
		switch {
		case err != nil:
			bad++
			fmt.Printf("%-40s does not locate: %v\n\t%s\n", d.name, err, d.where())
		case !missing:
			fmt.Printf("%-40s %s (%s) tests %s\n", d.name, d.where(), at.file, strings.Join(d.tests, " "))
		}
	}
	fmt.Printf("%d of %d defects no longer locate\n", bad, len(chosen))
}

// packagesOf lists, sorted, the packages whose tests the mutants need
// (./pgstore only with PostgreSQL).
func packagesOf(chosen []defect, havePG bool) []string {
	pkgs := map[string]bool{}
	for _, m := range chosen {
		for _, p := range m.tests {
			pkgs[p] = p != "./pgstore" || havePG
		}
	}
	all := make([]string, 0, len(pkgs))
	for p, ok := range pkgs {
		if ok {
			all = append(all, p)
		}
	}
	slices.Sort(all)
	return all
}

// tryAll applies and tests each mutant in turn, prints each verdict and the
// score, and fails unless every mutant tested was caught.
func tryAll(dir string, chosen []defect, limit time.Duration, havePG bool) error {
	counts := map[string]int{}
	issueCaught, issueTotal := 0, 0
	start := time.Now()
	for _, m := range chosen {
		res, secs, detail := try(dir, m, limit, havePG)
		counts[res]++
		if m.issue {
			issueTotal++
			if res == caught {
				issueCaught++
			}
		}
		fmt.Printf("%-8s %6.1fs  %-32s %s\n", res, secs, m.name, detail)
	}
	tested := len(chosen) - counts[skipped]
	fmt.Printf("\nscore: %d of %d caught (%d survived, %d timeout, %d error, %d skipped); issue 20's fifteen: %d of %d caught; %.0f s\n",
		counts[caught], tested, counts[survived], counts[timedOut], counts[failed], counts[skipped], issueCaught, issueTotal, time.Since(start).Seconds())
	if counts[caught] != tested {
		return errors.New("not every mutant was caught")
	}
	return nil
}

// try plants m in dir, tests it, and puts the file back.
func try(dir string, m defect, limit time.Duration, havePG bool) (string, float64, string) {
	if slices.Contains(m.tests, "./pgstore") && !havePG {
		return skipped, 0, "(no PAYGATE_TEST_POSTGRES_DSN)"
	}
	at, err := locate(dir, m)
	if err != nil {
		return failed, 0, "does not locate: " + err.Error()
	}
	path := filepath.Join(dir, filepath.FromSlash(at.file))
	orig, err := os.ReadFile(path)
	if err != nil {
		return failed, 0, err.Error()
	}
	if err := os.WriteFile(path, apply(orig, at, m), 0o644); err != nil {
		return failed, 0, err.Error()
	}
	defer os.WriteFile(path, orig, 0o644)
	res, secs, out := goTest(dir, m.tests, limit)
	detail := ""
	switch res {
	case caught:
		detail = "by " + firstFailure(out)
	case failed:
		detail = "does not build: " + firstLine(out)
	}
	return res, secs, detail
}

// goTest runs the tests of pkgs in dir, stopping at the first failing test
// or at limit. The outcome is survived when they pass.
func goTest(dir string, pkgs []string, limit time.Duration) (string, float64, string) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"test", "-count=1", "-vet=off", "-failfast", "-v", "-skip", soak}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The go command and the test binaries it starts die together.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return failed, 0, err.Error()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	var out strings.Builder
	failedAt := time.Duration(0)
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if failedAt == 0 && strings.HasPrefix(strings.TrimSpace(line), "--- FAIL") {
			// A test failed: the mutant is caught; nothing else need run.
			failedAt = time.Since(start)
			cancel()
		}
	}
	err := <-done
	text := out.String()
	secs := time.Since(start).Seconds()
	switch {
	case failedAt > 0:
		return caught, failedAt.Seconds(), text
	case strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]"):
		return failed, secs, text
	case ctx.Err() != nil:
		return timedOut, secs, text
	case err != nil:
		return caught, secs, text
	}
	return survived, secs, text
}

// firstFailure names the first failing test in go test -v output.
func firstFailure(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "--- FAIL") {
			return strings.TrimPrefix(l, "--- FAIL: ")
		}
	}
	return "a failing run: " + firstLine(out)
}

// failures is the part of go test -v output that says what failed: every
// line but the runs and passes, at most 60.
func failures(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- PASS") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if keep = append(keep, line); len(keep) == 60 {
			break
		}
	}
	return strings.Join(keep, "\n")
}

// firstLine is the first line of out that says something.
func firstLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "=== RUN") {
			return l
		}
	}
	return "(no output)"
}

// scratchCopy copies the module into a new temporary directory: the files of
// revision rev, or the working tree's tracked and untracked files (not the
// ignored ones) when rev is empty.
func scratchCopy(rev string) (string, error) {
	dir, err := os.MkdirTemp("", "paygate-mutation-")
	if err != nil {
		return "", err
	}
	if rev != "" {
		cmd := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", rev, dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("git archive %s: %v: %s", rev, err, out)
		}
		return dir, nil
	}
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("git ls-files (run from the repository): %w", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if err := copyFile(name, filepath.Join(dir, name)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// copyFile copies src to dst, making dst's directory; a tracked file that
// is gone from the working tree is left out.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// describe names what is tested.
func describe(rev string) string {
	if rev == "" {
		return "the working tree"
	}
	return "revision " + rev
}

// soak names the tests the mutation runs skip (go test -skip): soak tests
// whose length is set by their design, not by a defect. The pgstore crash
// test paces 50 process kills 200-500 ms apart (17 s at least) and bounds
// itself at 90 s; the contract and fault tests catch the same defects in
// seconds. The watch's fleet on the test clock (eight days of 300 orders,
// 4 to 15 s) is skipped for the same reason: the store contract catches
// its defects sooner.
const soak = "^(TestCrashFulfilTxAcrossProcesses|TestWatchFleetSettlesEveryOrderOnce)$"
