package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

func TestFeed(t *testing.T) {
	sb := gatewaytest.NewServer()
	defer sb.Close()
	valid, err := os.ReadFile("../../zakat/testdata/webhook/valid-batch.json")
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, feed(context.Background(), sb.URL, sb.WebhookPassword, zakat.Validator{}, valid, &out))
	require.Equal(t, "ORD-000001 accepted\nORD-000002 accepted\nORD-000003 accepted\n", out.String())
	require.Len(t, sb.Transactions(), 3)

	// A wrong password: every transaction rejected, each line says why,
	// and the error carries the same report.
	out.Reset()
	err = feed(context.Background(), sb.URL, "wrong-password", zakat.Validator{}, valid, &out)
	var se *paygate.SendError
	require.True(t, errors.As(err, &se))
	require.ErrorIs(t, err, paygate.ErrUnauthorized)
	require.Equal(t, []string{"ORD-000001", "ORD-000002", "ORD-000003"}, se.Report.Rejected)
	require.Contains(t, out.String(), "ORD-000001 rejected: ")
	require.Contains(t, err.Error(), "send incomplete: 0 of 3 transactions accepted, 3 rejected")

	invalid, err := os.ReadFile("../../zakat/testdata/webhook/invalid-batch.json")
	require.NoError(t, err)
	err = feed(context.Background(), sb.URL, sb.WebhookPassword, zakat.Validator{}, invalid, &out)
	var ve *zakat.ValidationError
	require.True(t, errors.As(err, &ve))
	require.Len(t, ve.Problems, 4)
	require.Equal(t, 3, sb.WebhookReceived(), "nothing of the invalid batch was sent")
}

// The feed against the real endpoint's shape: a URL with the brand's path
// and the brand's agency codes.
func TestFeedBrand(t *testing.T) {
	rules, err := zakat.NewValidator(zakat.ParseAgencies("ADBLZS,ADBPPZ,ADB")...)
	require.NoError(t, err)
	sb := gatewaytest.NewServer(gatewaytest.WithWebhookPath("/api/adb/webhook"), gatewaytest.WithWebhookValidator(rules))
	defer sb.Close()
	valid, err := os.ReadFile("../../zakat/testdata/webhook/valid-batch.json")
	require.NoError(t, err)
	adb := bytes.ReplaceAll(valid, []byte(`"agency": "BANK`), []byte(`"agency": "ADB`))
	var out bytes.Buffer
	require.NoError(t, feed(context.Background(), sb.WebhookURL(), sb.WebhookPassword, rules, adb, &out))
	require.Equal(t, "ORD-000001 accepted\nORD-000002 accepted\nORD-000003 accepted\n", out.String())
	require.Len(t, sb.Transactions(), 3)
}
