module github.com/paygate-go/paygate/e2e

go 1.25.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/paygate-go/paygate v0.0.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
)

replace github.com/paygate-go/paygate => ../
