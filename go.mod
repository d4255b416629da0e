module github.com/paygate-go/paygate

go 1.23

require (
	github.com/google/go-querystring v1.2.0
	github.com/jarcoal/httpmock v1.4.2
	github.com/lib/pq v1.12.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.14.0 // indirect
)
