package paygate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The set holds at most maxCount ordernos and maxBlocks arena blocks: past
// either it is full and records nothing more, and what it holds is still
// found.
func TestOrderNoSetBounded(t *testing.T) {
	for _, tc := range []struct {
		name                string
		maxCount, maxBlocks int
		nos                 []string
		fullAt              int // the index of the first orderno not recorded, or -1
	}{
		{name: "within", maxCount: 10, maxBlocks: 2, nos: []string{"a", "b", "c"}, fullAt: -1},
		{name: "count", maxCount: 3, maxBlocks: 2, nos: []string{"a", "b", "c", "d", "e"}, fullAt: 3},
		{name: "blocks", maxCount: 100, maxBlocks: 1, nos: []string{"a", strings.Repeat("x", arenaBlock), "c"}, fullAt: 1},
	} {
		s := newOrderNoSet(0)
		s.maxCount, s.maxBlocks = tc.maxCount, tc.maxBlocks
		for i, no := range tc.nos {
			_, dup := s.firstOrAdd(no, i)
			require.False(t, dup, "%s: %s", tc.name, no)
			require.Equal(t, tc.fullAt >= 0 && i >= tc.fullAt, s.full, "%s: after %d", tc.name, i)
		}
		require.LessOrEqual(t, s.count, tc.maxCount, tc.name)
		require.LessOrEqual(t, len(s.blocks), tc.maxBlocks, tc.name)
		first, dup := s.firstOrAdd("a", 99)
		require.True(t, dup, "%s: a held orderno is still found", tc.name)
		require.Equal(t, 0, first, tc.name)
	}
	require.Equal(t, 1<<20, newOrderNoSet(0).maxCount)
	require.Equal(t, 16, newOrderNoSet(0).maxBlocks)
	s := newOrderNoSet(50 << 20)
	require.Len(t, s.shards[0].slots, 8192, "a hint past maxOrderNos sizes for maxOrderNos")
}

// Past maxBatchProblems problems, both readers list the first ones and
// count the rest in one last problem, and they agree.
func TestValidateBatchProblemCap(t *testing.T) {
	body := []byte(`{"transactions":[` + strings.TrimSuffix(strings.Repeat("1,", maxBatchProblems+500), ",") + `]}`)
	_, err := ValidateBatchJSON(body)
	problems := problemsOf(t, err)
	require.Len(t, problems, maxBatchProblems+1)
	require.Equal(t, FieldError{Field: "/transactions/999", Rule: ruleObject, Value: "1"}, problems[maxBatchProblems-1])
	require.Equal(t, FieldError{Rule: "500 more problems, not listed: only the first 1000 are"}, problems[maxBatchProblems])
	requireSameAsJSON(t, body, 7, 4096)
}
