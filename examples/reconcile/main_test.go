package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/gatewaytest"
)

func TestReconcile(t *testing.T) {
	sb := gatewaytest.NewServer()
	defer sb.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	require.NoError(t, demoOrders(context.Background(), sb, client))
	today := time.Now().In(time.FixedZone("MYT", 8*3600)).Format(time.DateOnly)
	q, err := query(today, today)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, reconcile(context.Background(), client, q, &out))
	require.Equal(t, "seller_order_no,amount,status,fpx_debit_auth_code\n"+
		"DEMO-1,10.00,success,00\nDEMO-2,20.00,failed,51\nDEMO-3,30.00,success,00\n", out.String())
	_, err = query("yesterday", today)
	require.Error(t, err)
}
