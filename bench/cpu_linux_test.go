package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errNoCPUClock is nil: on Linux the process's and PostgreSQL's CPU time can
// be read.
var errNoCPUClock error

// selfCPU is this process's user+system CPU time (getrusage RUSAGE_SELF):
// every goroutine's, the benchmark's HTTP client and pgx floor included.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// userHZ is the unit of /proc/<pid>/stat's utime and stime: USER_HZ, which
// getconf CLK_TCK prints, 100 on every Linux architecture Go supports.
const userHZ = 100

// procCPU is process pid's CPU time: the first field of
// /proc/<pid>/schedstat (time on a CPU, in ns, the clock utime+stime are
// scaled from) where the kernel has it, else utime+stime of
// /proc/<pid>/stat (fields 14 and 15, in 1/USER_HZ s: 10 ms steps).
func procCPU(pid int) (time.Duration, error) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid)); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return time.Duration(ns), nil
			}
		}
	}
	f, err := statFields(pid, 15)
	if err != nil {
		return 0, err
	}
	utime, err1 := strconv.ParseInt(f[14], 10, 64)
	stime, err2 := strconv.ParseInt(f[15], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[14], f[15])
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// statFields is /proc/<pid>/stat's fields numbered as in proc(5), f[1]
// the pid, f[2] the command: at least upto of them. The command is in
// parentheses and may hold spaces, so the rest are counted from the last
// ')'.
func statFields(pid, upto int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := append([]string{"", strconv.Itoa(pid), s[:end+1]}, strings.Fields(s[end+1:])...)
	if len(f) <= upto {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)-1)
	}
	return f, nil
}

// parentOf is process pid's parent (field 4 of /proc/<pid>/stat).
func parentOf(pid int) (int, error) {
	f, err := statFields(pid, 4)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[4])
}
