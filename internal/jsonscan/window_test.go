package jsonscan

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// windowReader holds at most a chunk and a token's first keep bytes,
// whatever the bytes (a long string, number or run of garbage, nesting,
// white space), and hands out every byte once, in order.
func TestWindowReaderBounded(t *testing.T) {
	const chunk, keep, size = 64, 101, 1 << 20
	for name, in := range map[string]string{
		"string":          `["` + strings.Repeat(`a\u00e9\"\\`, size/10) + `"]`,
		"escapes":         `["` + strings.Repeat(`\n`, size/2) + `"]`, // no plain byte to end a window at
		"unicode escapes": `["` + strings.Repeat(`\u00e9`, size/6) + `"]`,
		"quote escapes":   `{"` + strings.Repeat(`\"\\`, size/4) + `":0}`,
		"surrogate pairs": `["` + strings.Repeat(`\ud83d\ude00`, size/12) + `"]`,
		"lone backslash":  `["` + strings.Repeat(`\\`, size/2),
		"number":          "[" + strings.Repeat("1234567890", size/10),
		"garbage":         strings.Repeat("t", size),
		"nested arrays":   strings.Repeat("[", size),
		"white space":     strings.Repeat(" ", size),
		"commas":          strings.Repeat(",", size),
	} {
		w := &windowReader{r: iotest.HalfReader(strings.NewReader(in)), chunk: chunk, keep: keep}
		var got strings.Builder
		for {
			win, _, ok := w.next()
			if !ok {
				break
			}
			require.LessOrEqual(t, len(win), keep+chunk+1, name)
			require.LessOrEqual(t, cap(w.buf), 4*(keep+chunk), name)
			got.Write(win)
		}
		require.NoError(t, w.err)
		require.Equal(t, in, got.String(), name)
	}
}
