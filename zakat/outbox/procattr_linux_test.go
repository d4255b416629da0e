package outbox

import "syscall"

// dieWithTest makes a relay process of the soak die with the test process
// (Linux's parent-death signal), so that no relay outlives a failed run.
func dieWithTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
