// Package zakat is the partner bank's side of the SDK, apart from the
// sender: a zakat transaction of the bank webhook (Transaction, its Data,
// a Batch; docs/protocol.md B1-B3), the values its `agency`, `zakat_state`
// and `zakat_type` take, the Validator that checks records and bodies
// against every rule of the protocol (with the JSON Schema of the body),
// and the SendReport of a send. paygate.WebhookSender posts the
// transactions; a merchant using the root package paygate never meets
// this package, and it imports nothing of paygate.
//
// The zero Validator checks the document's agency codes:
//
//	_, err := zakat.Validator{}.ValidateBatchJSON(body) // err: a *zakat.ValidationError, by JSON pointer
//	rules, err := zakat.NewValidator(zakat.ADBAgencies()...) // the real service's codes
//
// A State or Type constant is its JSON value in CamelCase (Selangor is
// "selangor", KualaLumpur "kuala_lumpur", ZakatFitrah "zakat_fitrah"), so
// the protocol's two fitrah types stay apart (Fitrah is "fitrah") and the
// state Perak ("perak") is not the type ZakatPerak ("zakat_perak", silver).
// An Agency constant is named by what it pays: AgencyLZS, AgencyPPZ and
// AgencyTest are the document's placeholder codes (BANKLZS, BANKPPZ,
// BANK), AgencyADBLZS, AgencyADBPPZ and AgencyADBTest the real service's
// (ADBLZS, ADBPPZ, ADB; docs/assumptions.md A-webhook-brand).
//
//	tx := zakat.Transaction{Agency: zakat.AgencyADBLZS, Amount: 12000, Status: zakat.StatusSuccess, /* ... */
//		Data: zakat.Data{State: zakat.Selangor, Type: zakat.ZakatPendapatan}}
package zakat
