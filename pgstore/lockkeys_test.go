package pgstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLockKeysAreStable pins the advisory lock keys: replicas of two
// releases share them during a rolling deploy, so a release that changed
// one would let an old and a new replica take over the same claim, or
// build the same index, at once. The figures are those of the first
// release that had each lock.
func TestLockKeysAreStable(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"key", keyLock("paygate_dedupe", "$1"), "hashtextextended($1, -2717348288484981121)"},
		{"migrate", migrateLock("paygate_dedupe"), int64(-4516338781977311695)},
		{"migrate watch", migrateLock("paygate_watch"), int64(2180060789121866513)},
		{"expiry", expiryLock("paygate_dedupe"), int64(1939714287726265217)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.got)
		})
	}
}
