package observe

import "time"

// Call is a call to the gateway: one logical request and its retries.
type Call struct {
	// Method is the HTTP method.
	Method string
	// Route is the request's path as configured, without its query: the
	// endpoint's path (Endpoints), the checkout URL's or the webhook URL's.
	// It never holds a reference: every path the SDK calls is fixed but
	// the bank list's, which ends in its channel ("b2c" or "b2b").
	Route string
}

// Retry is an attempt that failed and is followed by another.
type Retry struct {
	// Attempt is the number of the attempt that failed, from 1.
	Attempt int
	// Status is the HTTP status it was answered with, 0 when no answer
	// came.
	Status int
	// RetryAfter is the wait the service asked for (Retry-After), 0 when
	// it asked none.
	RetryAfter time.Duration
	// Wait is how long the SDK waits before the next attempt.
	Wait time.Duration
}

// CallEnd is how a call ended.
type CallEnd struct {
	// Attempts is how many attempts were made (0 when the context had
	// ended before the first).
	Attempts int
	// Status is the HTTP status of the last answer, 0 when none came.
	Status int
	// Class says how the call failed; ClassOK when it succeeded.
	Class ErrorClass
}

// ErrorClass is how a call failed, for grouping failures.
type ErrorClass string

// The classes of a call's end.
const (
	// ClassOK: the call was answered with success.
	ClassOK ErrorClass = ""
	// ClassAnswer: the service answered with an error status (Status).
	ClassAnswer ErrorClass = "answer"
	// ClassTransport: no answer came (a failed connection, a reset, a
	// timeout of an attempt, an answer that could not be read).
	ClassTransport ErrorClass = "transport"
	// ClassContext: the call's context ended (cancelled or past its
	// deadline).
	ClassContext ErrorClass = "context"
	// ClassRequest: the request could not be made (a signing or encoding
	// error).
	ClassRequest ErrorClass = "request"
)
