// Package rawkey hands the signing key inside a paygate.Key to the SDK's
// own packages (gatewaytest signs callbacks with it, as the gateway
// does), without a method in paygate's API that would hand it to anyone.
package rawkey

import "github.com/paygate-go/paygate/internal/signing"

// Of returns the signing key a paygate.Key holds: nil for a zero Key or
// any other value. The root package sets it when it is initialised (it
// takes any: this package cannot name paygate.Key).
var Of func(key any) *signing.Key
