package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteText writes the report as text a merchant can attach to a support
// ticket: a header, a summary, then one block per assumption ID.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "paygate probe %s\n", r.RunID)
	fmt.Fprintf(&b, "sdk:      paygate-go %s\n", r.SDKVersion)
	fmt.Fprintf(&b, "started:  %s\n", r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "service:  %s\n", r.Service)
	if r.Agency != "" {
		fmt.Fprintf(&b, "agency:   %s\n", r.Agency)
	}
	fmt.Fprintf(&b, "create:   %t\n", r.Create)
	if len(r.Created) > 0 {
		fmt.Fprintf(&b, "created (unpaid, at RM 1.00): %s\n", strings.Join(r.Created, ", "))
	}
	fmt.Fprintf(&b, "requests: %d\n", r.Requests)
	fmt.Fprintf(&b, "verdicts: %d holds, %d differs, %d cannot be checked from here (of %d assumptions, docs/assumptions.md)\n",
		r.Count(Holds), r.Count(Differs), r.Count(Unchecked), len(r.Results))
	for _, v := range []Verdict{Differs, Holds, Unchecked} {
		for _, res := range r.Results {
			if res.Verdict != v {
				continue
			}
			fmt.Fprintf(&b, "\n%s: %s\n", res.ID, res.Verdict)
			if res.Sent != "" {
				fmt.Fprintf(&b, "  sent: %s\n", res.Sent)
			}
			if res.Saw != "" {
				fmt.Fprintf(&b, "  saw:  %s\n", res.Saw)
			}
			if res.Reason != "" {
				fmt.Fprintf(&b, "  why:  %s\n", res.Reason)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
