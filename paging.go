package paygate

import (
	"context"
	"fmt"
	"hash/maphash"
	"iter"
)

// DefaultMaxPages is the ceiling on the pages one walk reads when
// ReportQuery.MaxPages is 0: a last guard against a server that never sends
// a short page nor repeats one.
const DefaultMaxPages = 100000

// pager holds the stop rules of a payment report walk (docs/protocol.md
// "Payment report" paging; docs/assumptions.md A-report-paging), one page at
// a time, so that Payments only fetches and yields.
type pager struct {
	// items is what page 0 asked for (AllItems for every row).
	items int
	// size is a full page's row count: items, or the server's cap once page
	// 0 shows one; later pages ask for exactly size rows.
	size int
	// maxPages is the ceiling on pages.
	maxPages int
	seed     maphash.Seed
	// seen maps the digest of every non-empty page read to its number.
	seen map[uint64]int
	// past counts rows on pages at or after the announced end; pastFrom is
	// the first such page and pastTotal the total_pages it announced.
	past, pastFrom, pastTotal int
}

// newPager starts the rules for a walk that asks items rows a page.
func newPager(items, maxPages int) *pager {
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	return &pager{items: items, maxPages: maxPages, seed: maphash.MakeSeed(), seen: map[uint64]int{}}
}

// pageVerdict is what the rules say of one page.
type pageVerdict struct {
	// skip is an error that ends the walk before the page's rows (they
	// were yielded already: the page repeats an earlier one).
	skip error
	// next is true when another page follows this one.
	next bool
	// after is an error that ends the walk after the page's rows.
	after error
}

// page applies the rules to page n as it arrives.
func (pg *pager) page(p *ReportPage, n int) pageVerdict {
	if err := pg.remember(p, n); err != nil {
		return pageVerdict{skip: err}
	}
	if n == 0 && pg.firstPage(p) {
		return pg.end(p, n) // every row came at once
	}
	if len(p.Rows) < pg.size {
		return pg.end(p, n)
	}
	if n+1 >= pg.maxPages {
		return pageVerdict{after: fmt.Errorf("%w: %d full pages and no short one; stopped at the ceiling (ReportQuery.MaxPages)", ErrReportPaging, pg.maxPages)}
	}
	return pageVerdict{next: true}
}

// remember records the digest of page n, an error when it repeats an
// earlier page, and counts its rows when it lies at or past the announced
// end.
func (pg *pager) remember(p *ReportPage, n int) error {
	rows := len(p.Rows)
	if rows == 0 {
		return nil
	}
	d := p.digest(pg.seed)
	if m, ok := pg.seen[d]; ok {
		return fmt.Errorf("%w: page %d repeats page %d (does the server ignore page, or cycle?)", ErrReportPaging, n, m)
	}
	pg.seen[d] = n
	if p.HasTotalPages && n >= p.TotalPages {
		if pg.past == 0 {
			pg.pastFrom, pg.pastTotal = n, p.TotalPages
		}
		pg.past += rows
	}
	return nil
}

// firstPage sets the page size from page 0, and reports whether that page
// holds every row (AllItems asked and the server did not cap it). A first
// page shorter than asked (or than everything) while total_pages announces
// more is a server that caps items: its page size is the one to follow
// (docs/assumptions.md A-report-filters).
func (pg *pager) firstPage(p *ReportPage) (all bool) {
	rows := len(p.Rows)
	pg.size = pg.items
	if p.HasTotalPages && p.TotalPages > 1 && rows > 0 && (pg.items == AllItems || rows < pg.items) {
		pg.size = rows
		return false
	}
	return pg.items == AllItems
}

// end is the verdict on the walk's last page n: complete, cut short before
// the announced end, or complete past it.
func (pg *pager) end(p *ReportPage, n int) pageVerdict {
	switch {
	case p.HasTotalPages && n+1 < p.TotalPages:
		return pageVerdict{after: fmt.Errorf("%w: page %d has %d of %d rows, but stats.total_pages says %d pages: the report is cut short", ErrReportPaging, n, len(p.Rows), pg.size, p.TotalPages)}
	case pg.past > 0:
		return pageVerdict{after: fmt.Errorf("%w: %d rows on pages %d to %d, but stats.total_pages said %d pages; every row was read", ErrReportPastTotalPages, pg.past, pg.pastFrom, n, pg.pastTotal)}
	}
	return pageVerdict{}
}

// Payments walks the payment report from page 0 and ends after a page with
// fewer rows than the page size (docs/protocol.md "Payment report");
// stats.total_pages is only a cross-check. Rows read past the announced
// count end the walk with ErrReportPastTotalPages; a report cut short, a
// repeated page or more than q.MaxPages pages with ErrReportPaging
// (docs/assumptions.md A-report-paging). The next page is fetched while
// the caller consumes the current one, so memory stays at about two
// pages; ctx is checked between rows. An error is yielded once, then the
// walk ends; leaving the loop early cancels the fetch in flight.
func (c *Client) Payments(ctx context.Context, q ReportQuery) iter.Seq2[ReportRow, error] {
	return func(yield func(ReportRow, error) bool) {
		_, items, err := q.values(0)
		if err != nil {
			yield(ReportRow{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w := &walk{c: c, cancel: cancel, q: q, pg: newPager(items, q.MaxPages)}
		if err := w.run(ctx, yield); err != nil {
			yield(ReportRow{}, err)
		}
	}
}

// walk is one loop of Payments: the query, the paging rules, and the
// fetch in flight (under a context that cancel ends).
type walk struct {
	c      *Client
	cancel context.CancelFunc
	q      ReportQuery
	pg     *pager
	// next is the fetch of the following page, noFetch when none is in flight.
	next <-chan pageResult
}

// noFetch is walk.next with no fetch in flight: closed, it never blocks.
var noFetch = func() <-chan pageResult { ch := make(chan pageResult); close(ch); return ch }()

// run fetches pages and yields their rows until the rules end the walk; it
// returns the error that ends it, nil when the walk is complete or the
// caller left the loop.
func (w *walk) run(ctx context.Context, yield func(ReportRow, error) bool) error {
	w.next = w.c.fetchPage(ctx, w.q, 0)
	for n := 0; ; n++ {
		r := <-w.next
		w.next = noFetch
		if r.err != nil {
			return r.err
		}
		v := w.pg.page(r.page, n)
		if v.skip != nil {
			return v.skip
		}
		if v.next {
			w.q.ItemsPerPage = w.pg.size
			w.next = w.c.fetchPage(ctx, w.q, n+1)
		}
		if stop, err := w.rows(ctx, r.page.Rows, yield); stop {
			return err
		}
		if !v.next {
			return v.after
		}
	}
}

// rows yields a page's rows, checking ctx before each. It stops when the
// caller leaves the loop (nil) or ctx ends (its error), after cancelling
// the fetch in flight and waiting for it: no goroutine outlives the loop.
func (w *walk) rows(ctx context.Context, rows []ReportRow, yield func(ReportRow, error) bool) (stop bool, _ error) {
	for _, row := range rows {
		err := ctx.Err()
		if err == nil && yield(row, nil) {
			continue
		}
		w.cancel()
		<-w.next
		return true, err
	}
	return false, nil
}

// pageResult is one fetched page or its error.
type pageResult struct {
	page *ReportPage
	err  error
}

// fetchPage fetches page n in the background; the channel holds its result.
func (c *Client) fetchPage(ctx context.Context, q ReportQuery, n int) <-chan pageResult {
	ch := make(chan pageResult, 1)
	go func() {
		p, err := c.PaymentReportPage(ctx, q, n)
		ch <- pageResult{p, err}
	}()
	return ch
}

// digest identifies a page's rows under seed, to tell a repeated page.
func (p *ReportPage) digest(seed maphash.Seed) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, r := range p.Rows {
		h.WriteString(r.raw)
		h.WriteByte(0)
	}
	return h.Sum64()
}
