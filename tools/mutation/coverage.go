//go:build unix

package main

// Which tests of a package run which lines, for the mechanical run: each
// mutant runs only the tests that reach it.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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

// coverage maps each line of the money-path packages (file:line, the file
// relative to the repository) to the tests of the package pkg that run it,
// fastest first: each test is run alone with a coverage profile, on the
// unmutated code in dir. A test that fails unmutated is left out, and
// named.
func coverage(dir, pkg string, limit time.Duration) (map[string][]string, error) {
	bin := filepath.Join(dir, "cover.test")
	defer os.Remove(bin)
	var mutated []string
	for _, p := range moneyPath {
		mutated = append(mutated, p.pkg)
	}
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-cover", "-covermode=set",
		"-coverpkg="+strings.Join(mutated, ","), "-o", bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("coverage build: %v\n%s", err, out)
	}
	list := exec.Command(bin, "-test.list", ".")
	list.Dir = filepath.Join(dir, pkg)
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("listing tests: %w", err)
	}
	skip := regexp.MustCompile(soak)
	lines := map[string][]string{}
	took := map[string]time.Duration{}
	prof := filepath.Join(dir, "cover.out")
	for _, test := range strings.Fields(string(out)) {
		if !strings.HasPrefix(test, "Test") || skip.MatchString(test) {
			continue
		}
		os.Remove(prof)
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		run := exec.CommandContext(ctx, bin, "-test.run", "^"+test+"$", "-test.count=1", "-test.coverprofile="+prof)
		run.Dir = filepath.Join(dir, pkg)
		run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		run.Cancel = func() error { return syscall.Kill(-run.Process.Pid, syscall.SIGKILL) }
		began := time.Now()
		err := run.Run()
		cancel()
		took[test] = time.Since(began)
		if err != nil {
			fmt.Printf("  %s fails unmutated (%v): left out\n", test, err)
			continue
		}
		if err := readProfile(prof, test, lines); err != nil {
			return nil, err
		}
	}
	for _, tests := range lines {
		slices.SortFunc(tests, func(a, b string) int { return int(took[a] - took[b]) })
	}
	return lines, nil
}

// readProfile adds the lines a coverage profile marks as run to lines.
func readProfile(path, test string, lines map[string][]string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the test was skipped or killed before writing it
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// module/path/file.go:12.5,14.2 3 1
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[2] == "0" {
			continue
		}
		file, span, _ := strings.Cut(fields[0], ":")
		from, to, _ := strings.Cut(span, ",")
		l0, _ := strconv.Atoi(strings.Split(from, ".")[0])
		l1, _ := strconv.Atoi(strings.Split(to, ".")[0])
		rel := strings.TrimPrefix(strings.TrimPrefix(file, modulePath), "/")
		for l := l0; l <= l1; l++ {
			k := rel + ":" + strconv.Itoa(l)
			if !slices.Contains(lines[k], test) {
				lines[k] = append(lines[k], test)
			}
		}
	}
	return sc.Err()
}

// modulePath is the module's import path, as coverage profiles name files.
const modulePath = "github.com/paygate-go/paygate"
