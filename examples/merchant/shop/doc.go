// Package shop is the example merchant's application: a product page,
// checkout through the signed auto-submitting form, the CallbackHandler on
// its returnUrl, and pages that show the status from the shop's own records
// (never from the form the browser posts back). examples/merchant serves it;
// the browser test in e2e/ drives it.
package shop
