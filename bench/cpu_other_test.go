//go:build !linux

package bench

import (
	"errors"
	"time"
)

// errNoCPUClock says why CPU time is not read here: PostgreSQL's comes from
// /proc, which only Linux has.
var errNoCPUClock = errors.New("reads PostgreSQL's CPU time from /proc: Linux only")

func selfCPU() time.Duration { return 0 }

func procCPU(int) (time.Duration, error) { return 0, errNoCPUClock }

func parentOf(int) (int, error) { return 0, errNoCPUClock }
