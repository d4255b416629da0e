package zakat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Past orderNoBudget the set spills, and a repeat is still found, exactly:
// those found at once are listed where they are read, those found at the
// end after the other problems, in index order; both readers agree.
func TestValidateBatchRepeatsPastTheBudget(t *testing.T) {
	const n, pad = 3000, 4000 // 3000 ordernos of 4 KB: past the 8 MiB budget
	m := validBatchMap(n)
	txs := m["transactions"].([]any)
	for i, tx := range txs {
		tx.(map[string]any)["orderno"] = fmt.Sprintf("ORD-%06d-%s", i, strings.Repeat("x", pad))
	}
	for _, r := range [][2]int{{10, 3}, {2999, 3}, {2998, 2997}} {
		txs[r[0]].(map[string]any)["orderno"] = txs[r[1]].(map[string]any)["orderno"]
	}
	txs[2500].(map[string]any)["status"] = "unknown"
	body, err := json.Marshal(m)
	require.NoError(t, err)
	require.Greater(t, n*pad, orderNoBudget)

	_, err = Validator{}.ValidateBatchJSON(body)
	problems := problemsOf(t, err)
	require.Len(t, problems, 4, "%v", problems)
	value := fmt.Sprintf("ORD-%06d-", 3) + strings.Repeat("x", maxErrorValue-11) + "…"
	require.Equal(t, FieldError{Field: "/transactions/10/orderno", Rule: ruleUnique + " (also at /transactions/3/orderno)", Value: value}, problems[0])
	require.Equal(t, "/transactions/2500/status", problems[1].Field)
	require.Equal(t, "/transactions/2998/orderno", problems[2].Field)
	require.Equal(t, ruleUnique+" (also at /transactions/2997/orderno)", problems[2].Rule)
	require.Equal(t, FieldError{Field: "/transactions/2999/orderno", Rule: ruleUnique + " (also at /transactions/3/orderno)", Value: value}, problems[3])
	requireSameAsJSON(t, body, 64<<10)
}

// Past maxBatchProblems problems, both readers list the first ones and
// count the rest in one last problem, and they agree.
func TestValidateBatchProblemCap(t *testing.T) {
	body := []byte(`{"transactions":[` + strings.TrimSuffix(strings.Repeat("1,", maxBatchProblems+500), ",") + `]}`)
	_, err := Validator{}.ValidateBatchJSON(body)
	problems := problemsOf(t, err)
	require.Len(t, problems, maxBatchProblems+1)
	require.Equal(t, FieldError{Field: "/transactions/999", Rule: ruleObject, Value: "1"}, problems[maxBatchProblems-1])
	require.Equal(t, FieldError{Rule: "500 more problems, not listed: only the first 1000 are"}, problems[maxBatchProblems])
	requireSameAsJSON(t, body, 7, 4096)
}

// Past orderNoBudget the stream spills its ordernos to a temporary file,
// ValidateBatchJSON to memory (its body is in memory already): where no
// file can be made, the stream says the ordernos were not all checked (an
// error, not a *ValidationError, and never a valid batch), while
// ValidateBatchJSON reports the batch's problems as ever.
func TestValidateBatchSpillsToAFileOnlyWhenStreaming(t *testing.T) {
	const n, pad = 1100, 8000 // 1100 ordernos of 8 KB: past the 8 MiB budget
	var b strings.Builder
	b.WriteString(`{"transactions":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"orderno":"ORD-%06d-%s"}`, i, strings.Repeat("x", pad))
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	require.Greater(t, n*pad, orderNoBudget)
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))

	_, err := Validator{}.ValidateBatchReader(bytes.NewReader(body))
	require.ErrorContains(t, err, "paygate: checking that the ordernos are unique")
	var ve *ValidationError
	require.False(t, errors.As(err, &ve), "not a verdict on the batch: %v", err)

	_, err = Validator{}.ValidateBatchJSON(body)
	require.NotEmpty(t, problemsOf(t, err))
}
