// Command merchant is a small shop on net/http that takes payments through
// the gateway: a product page, checkout through the signed auto-submitting
// form, the CallbackHandler on its returnUrl, a return page and an orders
// page that show the status from the shop's own records (never from the
// form the browser posts back).
//
//	go run ./examples/merchant -sandbox          # against the embedded sandbox
//	go run ./examples/merchant -addr 127.0.0.1:8080   # against PAYGATE_* configuration
package main
