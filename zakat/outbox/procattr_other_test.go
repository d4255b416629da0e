//go:build !linux

package outbox

import "syscall"

// dieWithTest is nil where there is no parent-death signal: the soak's
// cleanup kills its relays.
func dieWithTest() *syscall.SysProcAttr { return nil }
