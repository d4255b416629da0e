//go:build unix

// Command mutation is the money path's mutation check (scripts/mutation.sh):
// it plants each defect of its table (mutants.go) in a scratch copy of the
// repository, one at a time, runs the tests of the packages that must catch
// it under a hard time limit, and prints caught, survived, timeout or error
// with the seconds it took. A defect whose snippet is not found exactly once
// is an error, never counted as caught. The repository itself is never
// changed. It runs on unix systems: a test run that overruns is killed with
// its whole process group.
//
// Usage (from the repository root):
//
//	go run ./scripts/mutation [-rev main] [-run regexp] [-limit 60s] [-list]
//
// PAYGATE_TEST_POSTGRES_DSN must be set: the sqldedup mutants need
// PostgreSQL, and without it they would survive for want of a database.
// -no-postgres skips them instead, and says so.
package main

import (
	"bufio"
	"bytes"
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
	list := flag.Bool("list", false, "list the mutants and exit (with -mechanical: generate them, build their schema, and print the counts)")
	snippets := flag.Bool("check", false, "only check that every mutant's snippet is found exactly once")
	noPG := flag.Bool("no-postgres", false, "skip the sqldedup mutants when PAYGATE_TEST_POSTGRES_DSN is not set")
	mechanical := flag.Bool("mechanical", false, "generate the mutants from the money path's code instead of the table (mechanical.go); -run then matches file:line, kind and source line")
	out := flag.String("out", "mutation-verdicts.tsv", "with -mechanical: where to write every mutant's verdict")
	pkgs := flag.String("pkgs", "", "with -mechanical: only the money-path packages matching this regexp (./internal/signing, ./internal/memstore, ., ./sqldedup)")
	flag.Parse()
	if *mechanical {
		havePG := os.Getenv("PAYGATE_TEST_POSTGRES_DSN") != ""
		if !havePG && !*noPG && !*list {
			fmt.Fprintln(os.Stderr, "mutation: PAYGATE_TEST_POSTGRES_DSN is not set: pass -no-postgres to leave ./sqldedup out")
			os.Exit(1)
		}
		if err := mechanicalRun(*pkgs, *run, *limit, *out, havePG, *list || *snippets); err != nil {
			fmt.Fprintln(os.Stderr, "mutation:", err)
			os.Exit(1)
		}
		return
	}
	if err := check(*rev, *run, *limit, *list || *snippets, *snippets, *noPG); err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		os.Exit(1)
	}
}

// check runs the whole mutation check; it fails when any mutant is not
// caught or cannot be applied.
func check(rev, run string, limit time.Duration, list, snippets, noPG bool) error {
	chosen, err := choose(run)
	if err != nil {
		return err
	}
	if list {
		return listMutants(chosen, snippets)
	}
	havePG := os.Getenv("PAYGATE_TEST_POSTGRES_DSN") != ""
	if !havePG && !noPG {
		return errors.New("PAYGATE_TEST_POSTGRES_DSN is not set: the sqldedup mutants need PostgreSQL (TESTING.md), or pass -no-postgres to skip them")
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

// choose returns the mutants whose name matches the regexp run.
func choose(run string) ([]mutant, error) {
	only, err := regexp.Compile(run)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	var chosen []mutant
	for _, m := range mutants {
		if only.MatchString(m.name) {
			chosen = append(chosen, m)
		}
	}
	return chosen, nil
}

// listMutants prints the mutants and, with snippets, whether each one's
// snippet is found exactly once; a snippet not found is an error.
func listMutants(chosen []mutant, snippets bool) error {
	bad := 0
	for _, m := range chosen {
		found := ""
		if snippets {
			if found = locate(m); found != "" {
				bad++
			}
		}
		fmt.Printf("%-32s issue=%-5t %s %v %s\n", m.name, m.issue, m.file, m.pkgs, found)
	}
	if bad > 0 {
		return fmt.Errorf("%d mutants cannot be applied", bad)
	}
	return nil
}

// packagesOf lists, sorted, the packages whose tests the mutants need
// (./sqldedup only with PostgreSQL).
func packagesOf(chosen []mutant, havePG bool) []string {
	pkgs := map[string]bool{}
	for _, m := range chosen {
		for _, p := range m.pkgs {
			pkgs[p] = p != "./sqldedup" || havePG
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
func tryAll(dir string, chosen []mutant, limit time.Duration, havePG bool) error {
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
		fmt.Printf("%-8s %6.1fs  %-32s %s %s\n", res, secs, m.name, m.file, detail)
	}
	tested := len(chosen) - counts[skipped]
	fmt.Printf("\nscore: %d of %d caught (%d survived, %d timeout, %d error, %d skipped); issue 20's fifteen: %d of %d caught; %.0f s\n",
		counts[caught], tested, counts[survived], counts[timedOut], counts[failed], counts[skipped], issueCaught, issueTotal, time.Since(start).Seconds())
	if counts[caught] != tested {
		return errors.New("not every mutant was caught")
	}
	return nil
}

// try applies m in dir, tests it, and puts the file back.
func try(dir string, m mutant, limit time.Duration, havePG bool) (string, float64, string) {
	if slices.Contains(m.pkgs, "./sqldedup") && !havePG {
		return skipped, 0, "(no PAYGATE_TEST_POSTGRES_DSN)"
	}
	path := filepath.Join(dir, filepath.FromSlash(m.file))
	orig, err := os.ReadFile(path)
	if err != nil {
		return failed, 0, err.Error()
	}
	if why := count(orig, m); why != "" {
		return failed, 0, why
	}
	if err := os.WriteFile(path, bytes.Replace(orig, []byte(m.old), []byte(m.new), 1), 0o644); err != nil {
		return failed, 0, err.Error()
	}
	defer os.WriteFile(path, orig, 0o644)
	res, secs, out := goTest(dir, m.pkgs, limit)
	detail := ""
	switch res {
	case caught:
		detail = "by " + firstFailure(out)
	case failed:
		detail = "does not build: " + firstLine(out)
	}
	return res, secs, detail
}

// count says why m cannot be applied to the file's text orig, or "".
func count(orig []byte, m mutant) string {
	switch n := bytes.Count(orig, []byte(m.old)); n {
	case 1:
		return ""
	case 0:
		return "snippet not found: update the mutant to the file's current text"
	default:
		return fmt.Sprintf("snippet found %d times: make it unique", n)
	}
}

// locate checks m against the working tree's file.
func locate(m mutant) string {
	orig, err := os.ReadFile(filepath.FromSlash(m.file))
	if err != nil {
		return "error: " + err.Error()
	}
	if why := count(orig, m); why != "" {
		return "error: " + why
	}
	return ""
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
