package paygate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatusValid(t *testing.T) {
	for _, s := range []Status{StatusSuccess, StatusPending, StatusFailed} {
		require.True(t, s.Valid())
	}
	for _, s := range []Status{"", "SUCCESS", "ok"} {
		require.False(t, s.Valid())
	}
}
