package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/examples/merchant/shop"
	"github.com/paygate-go/paygate/gatewaytest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve the shop on")
	sandbox := flag.Bool("sandbox", false, "run against the embedded sandbox instead of PAYGATE_* configuration")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var client *paygate.Client
	var key paygate.Key
	var err error
	if *sandbox {
		sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(2 * time.Second))
		defer sb.Close()
		client, err = sb.Client()
		key = sb.Key()
		fmt.Printf("sandbox %s\n", sb.URL)
	} else {
		client, err = paygate.NewClientFromEnv() // PAYGATE_AGENCY, PAYGATE_API_KEY, PAYGATE_*_URL
		if err == nil {
			key, err = paygate.KeyFromEnv() // PAYGATE_API_KEY, which signs the callbacks
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	srv := &http.Server{Handler: shop.New(client, key, base), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Printf("shop %s\n", base)
	if err := srv.Serve(l); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
