package testbound

import (
	"os"
	"testing"
)

// SoakVar is the switch for the soaks: SIGKILL crash runs, outages, long
// HTTP runs and big randomized runs, whose length is set by their design.
// They run only with PAYGATE_SOAK=1 (CI sets it); beside each, a fast
// test holds the same promise on a small scale in every run.
const SoakVar = "PAYGATE_SOAK"

// Soaking reports whether the soaks are switched on (PAYGATE_SOAK=1).
func Soaking() bool { return os.Getenv(SoakVar) == "1" }

// Soak skips t unless the soaks are switched on, naming the switch and
// fast, the test that holds the soak's promise in every run.
func Soak(t testing.TB, fast string) {
	t.Helper()
	if !Soaking() {
		t.Skipf("a soak: runs with %s=1 (CI sets it); every run holds its promise on a small scale with %s", SoakVar, fast)
	}
}
