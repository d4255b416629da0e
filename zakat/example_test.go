package zakat_test

import (
	"errors"
	"fmt"

	"github.com/paygate-go/paygate/zakat"
)

// A constant is its JSON value in CamelCase; an agency constant is named
// by what it pays.
func Example() {
	fmt.Println(zakat.Selangor, zakat.KualaLumpur, zakat.Perak)
	fmt.Println(zakat.Fitrah, zakat.ZakatFitrah, zakat.ZakatPerak)
	fmt.Println(zakat.Agencies(), zakat.ADBAgencies())
	// Output:
	// selangor kuala_lumpur perak
	// fitrah zakat_fitrah zakat_perak
	// [BANKLZS BANKPPZ BANK] [ADBLZS ADBPPZ ADB]
}

// ParseAgencies reads PAYGATE_WEBHOOK_AGENCIES; its result goes to
// zakat.NewValidator, which checks the codes.
func ExampleParseAgencies() {
	fmt.Printf("%q\n", zakat.ParseAgencies(" ADBLZS, ADBPPZ ,ADB"))
	fmt.Println(zakat.ParseAgencies("") == nil)
	// Output:
	// ["ADBLZS" "ADBPPZ" "ADB"]
	// true
}

func ExampleType_IsFitrah() {
	for _, t := range []zakat.Type{zakat.Fitrah, zakat.ZakatFitrah, zakat.ZakatEmas} {
		fmt.Println(t, t.IsFitrah())
	}
	// Output:
	// fitrah true
	// zakat_fitrah true
	// zakat_emas false
}

func ExampleValidator_ValidateBatchJSON() {
	_, err := zakat.Validator{}.ValidateBatchJSON([]byte(`{"transactions":[{"agency":"BANKLZS","orderno":"A1",
		"amount":-5,"name":"Ali","email":"ali@example.com","time":"2026-11-22T10:30:00",
		"status":"success","data":{"zakat_ic_no":"1234"}}]}`))
	var ve *zakat.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Println(p.Field, "|", p.Rule)
		}
	}
	// Output:
	// /transactions/0/amount | must be >= 0
	// /transactions/0/time | must be ISO 8601 with a timezone offset (Z, +08:00 or +0800), e.g. 2026-11-22T10:30:00+08:00
	// /transactions/0/data/zakat_ic_no | must be 12 digits
}
