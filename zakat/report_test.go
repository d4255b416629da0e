package zakat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSendStatusString(t *testing.T) {
	for s, want := range map[SendStatus]string{
		SendAccepted: "accepted", SendRejected: "rejected", SendUnconfirmed: "unconfirmed",
		SendNotSent: "not sent", SendInvalid: "invalid", SendStatus(9): "SendStatus(9)",
	} {
		require.Equal(t, want, s.String())
	}
}
