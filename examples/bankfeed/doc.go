// Command bankfeed is the partner bank's side: it reads a JSON batch of zakat
// transactions, validates it, and posts it to the webhook with
// X-API-Password, reporting what became of every orderno.
//
//	go run ./examples/bankfeed -sandbox zakat/testdata/webhook/valid-batch.json
//	PAYGATE_WEBHOOK_URL=https://pay.tulus.my/api/adb/webhook PAYGATE_WEBHOOK_AGENCIES=ADBLZS,ADBPPZ,ADB \
//	PAYGATE_WEBHOOK_PASSWORD=... go run ./examples/bankfeed batch.json
package main
