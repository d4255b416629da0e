// Package testbound gives the tests' fake servers hard bounds: a server
// asked more than its bound, or one whose code stops without an answer,
// fails the test at once with a message naming what broke, instead of
// leaving the client to run or wait until a timeout. For tests only.
package testbound

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/jarcoal/httpmock"
)

// Requests counts the requests a fake server answers, against a bound.
type Requests struct {
	t    testing.TB
	max  int64
	rule string
	n    atomic.Int64
}

// NewRequests bounds a fake server at max requests; rule names what a
// request past it breaks (e.g. "a walk stops after a short page").
func NewRequests(t testing.TB, max int, rule string) *Requests {
	return &Requests{t: t, max: int64(max), rule: rule}
}

// Take counts one request. Past the bound it fails the test, naming the
// rule, and returns false: the server must then answer so that the
// client's loop ends (Handler answers 400 and closes the connection).
func (r *Requests) Take() bool {
	n := r.n.Add(1)
	if n <= r.max {
		return true
	}
	r.t.Errorf("request %d is past the fake server's bound of %d: %s", n, r.max, r.rule)
	return false
}

// Count is the number of requests taken, those past the bound included.
func (r *Requests) Count() int { return int(r.n.Load()) }

// Handler serves h for the first max requests; every later one fails the
// test, naming rule, and is answered 400 on a closed connection.
func Handler(t testing.TB, max int, rule string, h http.Handler) (http.Handler, *Requests) {
	r := NewRequests(t, max, rule)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.Take() {
			w.Header().Set("Connection", "close")
			http.Error(w, "past the test's request bound: "+rule, http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, req)
	}), r
}

// Mock is an httpmock transport whose responders cannot run away or leave
// the client waiting: every request past the bound fails the test, naming
// the rule, and is answered 400; a responder that stops without an answer
// (a require failing inside it calls runtime.Goexit on httpmock's
// goroutine) makes the round trip fail at once, instead of after the
// client's attempt timeout.
type Mock struct {
	*httpmock.MockTransport
	reqs *Requests
}

// NewMock returns a Mock on a new httpmock transport, answering at most max
// requests over all its responders; rule names what a request past it
// breaks.
func NewMock(t testing.TB, max int, rule string) Mock {
	return Mock{httpmock.NewMockTransport(), NewRequests(t, max, rule)}
}

// RegisterResponder registers r as httpmock does, guarded.
func (m Mock) RegisterResponder(method, url string, r httpmock.Responder) {
	m.MockTransport.RegisterResponder(method, url, m.guard(r))
}

// RegisterNoResponder registers r as httpmock does, guarded.
func (m Mock) RegisterNoResponder(r httpmock.Responder) {
	m.MockTransport.RegisterNoResponder(m.guard(r))
}

// guard counts each request against the bound and runs r on a goroutine of
// its own, returning an error at once when r stops without returning (a
// failed require: the test's log says which check).
func (m Mock) guard(r httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		if !m.reqs.Take() {
			return httpmock.NewStringResponse(http.StatusBadRequest, "past the test's request bound: "+m.reqs.rule), nil
		}
		type result struct {
			resp *http.Response
			err  error
		}
		done := make(chan result, 1)
		go func() {
			returned := false
			defer func() {
				if !returned {
					done <- result{err: errors.New("testbound: the fake server stopped without an answer (a failed check: see the test's log)")}
				}
			}()
			resp, err := r(req)
			returned = true
			done <- result{resp, err}
		}()
		res := <-done
		return res.resp, res.err
	}
}
