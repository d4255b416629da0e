package skew

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// local is the client's clock in these tests, on a whole second.
var local = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// dated is an answer's header whose Date is local+d.
func dated(d time.Duration) http.Header {
	return http.Header{"Date": {local.Add(d).Format(http.TimeFormat)}}
}

func TestLearn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		before   time.Duration
		header   http.Header
		measured time.Duration
		ok       bool
		offset   time.Duration
	}{
		{"no Date", 0, http.Header{}, 0, false, 0},
		{"not a date", 7 * time.Second, http.Header{"Date": {"yesterday"}}, 0, false, 7 * time.Second},
		{"in step", 0, dated(0), 0, true, 0},
		{"under Min is not corrected", 0, dated(4 * time.Second), 4 * time.Second, true, 0},
		{"under Min resets an earlier offset", time.Minute, dated(time.Second), time.Second, true, 0},
		{"Min is corrected", 0, dated(Min), Min, true, Min},
		{"five minutes ahead", 0, dated(5 * time.Minute), 5 * time.Minute, true, 5 * time.Minute},
		{"five minutes behind", 0, dated(-5 * time.Minute), -5 * time.Minute, true, -5 * time.Minute},
		{"Max is adopted", 0, dated(Max), Max, true, Max},
		{"beyond Max keeps the earlier offset", time.Minute, dated(Max + time.Second), Max + time.Second, true, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Clock
			c.offset.Store(int64(tc.before))
			m, ok := c.Learn(tc.header, local.Add(300*time.Millisecond))
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.measured, m)
			require.Equal(t, tc.offset, c.Offset())
			got, seen := c.Measured()
			require.Equal(t, tc.ok, seen)
			require.Equal(t, tc.measured, got)
		})
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		measured time.Duration
		want     []string
	}{
		{"ahead", 5 * time.Minute, []string{"5m0s ahead of", "try again"}},
		{"behind", -7 * time.Second, []string{"7s behind", "try again"}},
		{"beyond Max", 3 * time.Hour, []string{"3h0m0s ahead of", "set this machine's clock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Explain(tc.measured)
			for _, w := range tc.want {
				require.Contains(t, got, w)
			}
		})
	}
}

func TestExplains(t *testing.T) {
	for _, tc := range []struct {
		measured, signedWith time.Duration
		want                 bool
	}{
		{5 * time.Minute, 0, true},
		{5 * time.Minute, 5 * time.Minute, false},
		{5*time.Minute + 2*time.Second, 5 * time.Minute, false},
		{-Min, 0, true},
		{0, time.Minute, true},
	} {
		require.Equal(t, tc.want, Explains(tc.measured, tc.signedWith), "%v signed with %v", tc.measured, tc.signedWith)
	}
}

// TestConcurrentLearn is for -race: answers and signers share one Clock.
func TestConcurrentLearn(t *testing.T) {
	var c Clock
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Learn(dated(time.Duration(i)*time.Minute), local)
			_ = c.Offset()
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, c.Offset(), 7*time.Minute)
}

// FuzzLearn: whatever Date the service sends, the offset signed with stays
// within Max.
func FuzzLearn(f *testing.F) {
	for _, s := range []string{local.Format(http.TimeFormat), "Mon, 02 Jan 2006 15:04:05 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, date string) {
		var c Clock
		c.Learn(http.Header{"Date": {date}}, local)
		require.LessOrEqual(t, c.Offset().Abs(), Max)
	})
}
