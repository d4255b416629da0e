// Package watch keeps watch over the orders a merchant awaits, so that a
// payment whose callback never came is still fulfilled, with no cron job
// and nothing to remember.
//
// Await an order with the reference it is created with before creating it
// (AwaitOrder does the joining of refNo and extraData). Every replica runs
// the same Watch on a shared Store; each due order is taken by exactly one
// replica, looked up at the gateway and run through the CallbackHandler's
// one callback path (CallbackHandler.Reconcile: the same Deduper key, the
// same Fulfil, OnStatus and double-payment and stale rules), so a watch and
// a callback racing fulfil once. An order leaves the watch when its outcome
// is known (fulfilled, already fulfilled, paid twice, failed); otherwise it
// is looked up again on a schedule that backs off from minutes to a day,
// until MaxAge, when it is given up and handed to OnGiveUp.
//
// Lookups are paced by a Budget shared by the whole fleet (the Store keeps
// it), so adding replicas never adds load on the gateway.
//
// MemoryStore is for one process (the embedded default); a fleet shares a
// store on its database, such as sqldedup's WatchStore. watchtest.Run
// checks any Store against the contract.
//
//	w := &watch.Watch{Handler: handler, Client: client, Store: store}
//	go w.Run(ctx)
//	if err := w.AwaitOrder(ctx, order); err != nil { ... } // before creating it
//	form, err := client.CheckoutForm(order)
//
// The defaults and the evidence for them are in docs/assumptions.md
// (A-watch-schedule).
package watch
