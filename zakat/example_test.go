package zakat_test

import (
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
// paygate.NewWebhookValidator, which checks the codes.
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
