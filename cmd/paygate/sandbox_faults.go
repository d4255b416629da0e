package main

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// sandboxFaults are the fault flags of paygate sandbox, each a recovery
// switch of gatewaytest: lost callbacks, duplicate deliveries, late
// settlement. The CLI runs in real time.
type sandboxFaults struct {
	loseEvery     *int
	duplicates    *int
	dupConcurrent *bool
	late          *time.Duration
}

// addSandboxFaults defines the fault flags on fs.
func addSandboxFaults(fs *flag.FlagSet) sandboxFaults {
	return sandboxFaults{
		loseEvery:     fs.Int("lose-every", 0, "never deliver the direct callbacks of the N-th, 2N-th, 3N-th... order paid (counted at each reference's first callback; 1: every order), as a gateway that gave up would; 0: lose none"),
		duplicates:    fs.Int("duplicates", 1, "send every direct callback attempt N times (1 to 100), to test that each event is acted on once"),
		dupConcurrent: fs.Bool("duplicates-concurrent", true, "send -duplicates' copies all at once (false: one after the other)"),
		late:          fs.Duration("late-settlement", 0, "a success paid is first recorded and called back as pending, and settles to success by itself after this delay (e.g. 2m); 0: at once"),
	}
}

// options are the gatewaytest options of the flags given.
func (f sandboxFaults) options() ([]gatewaytest.Option, error) {
	var opts []gatewaytest.Option
	switch {
	case *f.loseEvery < 0:
		return nil, fmt.Errorf("-lose-every %d: want 0 or more", *f.loseEvery)
	case *f.late < 0:
		return nil, fmt.Errorf("-late-settlement %v: want zero or more", *f.late)
	case *f.duplicates < 1 || *f.duplicates > 100:
		return nil, fmt.Errorf("-duplicates %d: want 1 to 100", *f.duplicates)
	}
	if *f.loseEvery > 0 {
		opts = append(opts, gatewaytest.WithCallbackLoss(everyNth(*f.loseEvery)))
	}
	if *f.duplicates > 1 {
		opts = append(opts, gatewaytest.WithDuplicateCallbacks(*f.duplicates, *f.dupConcurrent))
	}
	if *f.late > 0 {
		opts = append(opts, gatewaytest.WithLateSettlement(*f.late, func(string) bool { return true }))
	}
	return opts, nil
}

// everyNth matches the n-th, 2n-th... distinct reference it is asked
// about, and that reference every time it is asked again.
func everyNth(n int) func(refNo string) bool {
	var mu sync.Mutex
	seen := map[string]int{} // the reference's rank, from 1
	return func(refNo string) bool {
		mu.Lock()
		defer mu.Unlock()
		rank, ok := seen[refNo]
		if !ok {
			rank = len(seen) + 1
			seen[refNo] = rank
		}
		return rank%n == 0
	}
}

// webhookFaults are the webhook's fault flags of paygate sandbox, for a
// bank testing its outbox: answers lost after storing, how a repeated
// orderno is answered, and transactions refused for a server-side rule.
type webhookFaults struct {
	dropAfterStore *float64
	repeats        *string
	refuse         *string
}

// addWebhookFaults defines the webhook's fault flags on fs.
func addWebhookFaults(fs *flag.FlagSet) webhookFaults {
	return webhookFaults{
		dropAfterStore: fs.Float64("webhook-drop-after-store", 0, "a share (0 to 1) of webhook requests stored and then answered by a closed connection: the answer lost"),
		repeats:        fs.String("webhook-repeats", "stored", "how a batch with an orderno stored before is answered: stored (200, the new ones stored), 409 or 422 (nothing of it stored)"),
		refuse:         fs.String("webhook-refuse", "", "comma-separated ordernos the webhook refuses (400 pointing at each) for a server-side rule"),
	}
}

// options are the gatewaytest options of the webhook's flags given.
func (f webhookFaults) options() ([]gatewaytest.Option, error) {
	if r := *f.dropAfterStore; !(r >= 0 && r <= 1) { // NaN too
		return nil, fmt.Errorf("-webhook-drop-after-store %v: want 0 to 1", r)
	}
	answers := map[string]gatewaytest.DuplicateAnswer{"stored": gatewaytest.DuplicateStoredOnce, "409": gatewaytest.DuplicateConflict, "422": gatewaytest.DuplicateUnprocessable}
	repeats, ok := answers[*f.repeats]
	if !ok {
		return nil, fmt.Errorf("-webhook-repeats %q: want stored, 409 or 422", *f.repeats)
	}
	opts := []gatewaytest.Option{gatewaytest.WithWebhookDuplicates(repeats)}
	if *f.dropAfterStore > 0 {
		opts = append(opts, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{DropAfterStore: *f.dropAfterStore}))
	}
	if *f.refuse != "" {
		refused := map[string]bool{}
		for _, no := range strings.Split(*f.refuse, ",") {
			refused[strings.TrimSpace(no)] = true
		}
		opts = append(opts, gatewaytest.WithWebhookRefusal(gatewaytest.WebhookRefusal{Refuse: func(tx zakat.Transaction) bool { return refused[tx.OrderNo] }}))
	}
	return opts, nil
}
