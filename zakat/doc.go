// Package zakat is the vocabulary of a zakat transaction in the bank
// webhook: the values its `agency` field (docs/protocol.md B2) and its
// `zakat_state` and `zakat_type` data fields (B3) take, with the lists the
// protocol allows and the agency codes of the document and of the real
// service.
//
// It is a package of its own because it is the bank's vocabulary: a
// merchant using the root package paygate never meets it, so it stays off
// that package's page. paygate's Transaction and
// ZakatData carry these types, and paygate.WebhookValidator checks them;
// this package imports nothing of paygate.
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
//	tx := paygate.Transaction{Agency: zakat.AgencyADBLZS, /* ... */
//		Data: paygate.ZakatData{State: zakat.Selangor, Type: zakat.ZakatPendapatan}}
//	rules, err := paygate.NewWebhookValidator(zakat.ADBAgencies()...)
package zakat
