package paygate

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// The retry rules decide from an attempt's status (0: no answer) and error
// alone: a transient failure is retried for a repeatable request; a signed
// POST only when it provably did not reach the service or was refused
// unacted (429, 503).
func TestRetryRules(t *testing.T) {
	reset := errors.New("read: connection reset by peer")
	tests := []struct {
		name                  string
		status                int
		err                   error
		transient, signedPost bool
	}{
		{name: "refused connection", err: dialError(), transient: true, signedPost: true},
		{name: "name lookup failed", err: fmt.Errorf("lookup: %w", &net.DNSError{Err: "no such host", Name: "reports.example"}), transient: true, signedPost: true},
		{name: "reset after sending", err: reset, transient: true, signedPost: false},
		{name: "429", status: 429, err: &APIError{StatusCode: 429}, transient: true, signedPost: true},
		{name: "503", status: 503, err: &APIError{StatusCode: 503}, transient: true, signedPost: true},
		{name: "500", status: 500, err: &APIError{StatusCode: 500}, transient: true, signedPost: false},
		{name: "502", status: 502, err: &APIError{StatusCode: 502}, transient: true, signedPost: false},
		{name: "400", status: 400, err: &APIError{StatusCode: 400}, transient: false, signedPost: false},
		{name: "401", status: 401, err: &APIError{StatusCode: 401}, transient: false, signedPost: false},
		{name: "302", status: 302, err: &APIError{StatusCode: 302}, transient: false, signedPost: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.status, answerStatus(tt.err), "answerStatus")
			require.Equal(t, tt.transient, retryTransient(answerStatus(tt.err), tt.err), "retryTransient")
			require.Equal(t, tt.signedPost, retrySignedPost(answerStatus(tt.err), tt.err), "retrySignedPost")
		})
	}
}
