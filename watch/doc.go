// Package watch keeps watch over the orders a merchant awaits, so that a
// payment whose callback never came is still fulfilled, with no cron job
// and nothing to remember.
//
// Create each order through the watch (CreateOrder awaits it first, then
// creates it, and forgets it again if the create was refused for sure),
// and make the watch the CallbackHandler's Settler, so that an order its
// callback settled leaves the watch at once and is never looked up. Every
// replica runs the same Watch on a shared Store; each order still awaited
// when due is held by exactly one replica (a short hold, renewed while its
// lookup runs), looked up at the gateway and run through the handler's one
// callback path (CallbackHandler.Reconcile: the same Deduper key, Fulfil,
// OnStatus and double-payment and stale rules), so a watch and a callback
// racing fulfil once. An order leaves the watch when its outcome is known
// (fulfilled, already fulfilled, paid twice, failed); otherwise it is
// looked up again on a schedule that backs off from minutes to a day,
// until MaxAge, when it is given up and handed to OnGiveUp.
//
// The fleet's requests to the gateway, every retry of the Client counted,
// are paced by a Budget the Store keeps, so adding replicas never adds
// load on the gateway.
//
// MemoryStore is for one process (the embedded default); a fleet shares a
// store on its database, such as pgstore's WatchStore. watchtest.Run
// checks any Store against the contract.
//
//	w := &watch.Watch{Handler: handler, Client: client, Store: store}
//	handler.Settler = w
//	go w.Run(ctx)
//	res, err := w.CreateOrder(ctx, order)
//
// The defaults and the evidence for them are in docs/assumptions.md
// (A-watch-schedule, A-watch-create).
package watch
