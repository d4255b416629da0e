package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The quickstart walks all five stages and succeeds.
func TestQuickstart(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	for _, stage := range []string{"1. create order", "2. buyer pays", "3. indirect return", "4. direct callback", "5. reconcile", "all five stages"} {
		require.Contains(t, out.String(), stage)
	}
	require.Equal(t, 1, strings.Count(out.String(), "order fulfilled"))
}
