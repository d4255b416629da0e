package watch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWaitFollowsTheScheduleThenRepeatsItsLast(t *testing.T) {
	custom := []time.Duration{time.Minute, time.Hour}
	for _, c := range []struct {
		schedule []time.Duration
		checks   int
		want     time.Duration
	}{
		{nil, 0, 5 * time.Minute},
		{nil, 1, 10 * time.Minute},
		{nil, 9, 24 * time.Hour},
		{nil, 50, 24 * time.Hour},
		{custom, 0, time.Minute},
		{custom, 1, time.Hour},
		{custom, 7, time.Hour},
	} {
		require.Equal(t, c.want, wait(c.schedule, c.checks), "%v after %d checks", c.schedule, c.checks)
	}
	var total time.Duration
	for i := range 11 {
		total += wait(nil, i)
	}
	require.Equal(t, 80*time.Hour, total, "the default's eleventh lookup: 3 days 8 hours after creation")
}
