package zakat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// Two transactions with one orderno longer than the streaming window (300
// KiB; a window is 256 KiB), under a value cap the caller raised to 1 MiB:
// both validators report the repeat, the same problems, in the same order.
// Defect caught: the stream keeping a token only up to a window (or to the
// default cap) before it may cut it, whatever the caller's cap.
func TestValidatorsAgreeOnLongRepeatedOrderNos(t *testing.T) {
	long := strings.Repeat("9", 300<<10)
	batch := validBatchMap(3)
	txs := batch["transactions"].([]any)
	txs[0].(map[string]any)["orderno"] = long
	txs[2].(map[string]any)["orderno"] = long
	body, err := json.Marshal(batch)
	require.NoError(t, err)
	rules := Validator{}.WithMaxValueBytes(1 << 20)
	_, whole := rules.ValidateBatchJSON(body)
	problems := problemsOf(t, whole)
	require.Len(t, problems, 1, "%v", problems)
	require.Equal(t, "/transactions/2/orderno", problems[0].Field)
	require.Contains(t, problems[0].Rule, ruleUnique)
	for _, chunk := range []int{jsonscan.Chunk, 64 << 10} {
		n, streamed := validateStream(strings.NewReader(string(body)), chunk, rules)
		require.Equal(t, 3, n)
		requireSameError(t, whole, streamed, "chunk %d", chunk)
	}
}
