// Package ordernoset finds the repeated ordernos of a webhook batch,
// exactly, in a bounded amount of memory whatever the number of
// transactions.
//
// A Set answers at once, while what it holds fits its memory budget:
// Add says whether an orderno was seen before and where. Past the budget
// it spills what it holds to a Spill (a temporary file, or memory for an
// input already in memory) as sorted runs and answers at the end: Finish
// merges the runs and returns the repeats it has not answered yet, each
// with the index of the orderno's first transaction. Equal 64-bit hashes
// are never taken as equal ordernos: the bytes are compared, so a hash
// collision is never a false duplicate.
//
// It exists for paygate's webhook validation (the rule "every orderno of a
// batch is unique"), which streams batches of any size: a set of every
// orderno in memory would cost tens of bytes per transaction, without
// bound.
package ordernoset
