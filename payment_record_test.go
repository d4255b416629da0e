package paygate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSplitRefNo(t *testing.T) {
	for _, tc := range []struct {
		name, ref, base, extra string
	}{
		{name: "no extra", ref: "INV-1", base: "INV-1"},
		{name: "one ~", ref: "INV-1~cart-7", base: "INV-1", extra: "cart-7"},
		{name: "the public sample: several ~, the rest is extra", ref: "test123~881225-08-1234~12 Jalan Foo~#Sample RefNo",
			base: "test123", extra: "881225-08-1234~12 Jalan Foo~#Sample RefNo"},
		{name: "trailing ~", ref: "INV-1~", base: "INV-1"},
		{name: "nothing before ~", ref: "~x", extra: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, extra := SplitRefNo(tc.ref)
			require.Equal(t, tc.base, base)
			require.Equal(t, tc.extra, extra)
		})
	}
}

// problemFields lists the fields a record's problems name.
func problemFields(p PaymentRecord) []string {
	var out []string
	for _, e := range p.Problems {
		out = append(out, e.Field)
	}
	return out
}

func TestPaymentRecordDecode(t *testing.T) {
	myt := MalaysiaTime()
	for _, tc := range []struct {
		name     string
		raw      string
		want     PaymentRecord // Problems compared by field names only
		problems []string
		err      string
	}{
		{
			name: "sandbox shape",
			raw: `{"order_no":"SB1","seller_order_no":"INV-1~cart","agency":"AG","amount":"10.50","status":"success",
				"fpx_debit_auth_code":"00","fpx_txn_id":"T1","created_at":"2026-11-22T10:00:00+08:00","is_approved":1}`,
			want: PaymentRecord{RefNo: "INV-1", ExtraData: "cart", OrderNo: "SB1", Agency: "AG", Amount: 1050, Status: StatusSuccess,
				FPXCode: "00", HasFPXCode: true, FPXTxnID: "T1", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, myt)},
		},
		{
			name: "FPX names, amount a JSON number, status from the code, FPX time",
			raw: `{"order_no":"SB2","fpx_seller_order_no":"INV-2","fpx_txn_amount":10.5,"fpx_debit_auth_code":"51",
				"fpx_fpx_txn_id":"T2","fpx_txn_time":"20261122101112","created_date":"2026-11-22 10:00:00"}`,
			want: PaymentRecord{RefNo: "INV-2", OrderNo: "SB2", Amount: 1050, Status: StatusFailed, FPXCode: "51", HasFPXCode: true,
				FPXTxnID: "T2", Time: time.Date(2026, 11, 22, 10, 11, 12, 0, myt)},
		},
		{
			name: "a JSON number that starts with 0 is an amount",
			raw:  `{"seller_order_no":"INV-20","amount":0.50,"status":"success"}`,
			want: PaymentRecord{RefNo: "INV-20", Amount: 50, Status: StatusSuccess},
		},
		{
			name: "a JSON number that starts with 9 is an amount",
			raw:  `{"seller_order_no":"INV-21","amount":99.90,"status":"success"}`,
			want: PaymentRecord{RefNo: "INV-21", Amount: 9990, Status: StatusSuccess},
		},
		{
			name: "created time when there is no payment time",
			raw:  `{"fpx_seller_order_no":"INV-3","created_date":"2026-11-22 09:08:07","fpx_debit_auth_code":""}`,
			want: PaymentRecord{RefNo: "INV-3", Status: StatusPending, HasFPXCode: true, Time: time.Date(2026, 11, 22, 9, 8, 7, 0, myt)},
		},
		{
			name: "several ~: split at the first, the rest is extra, no problem",
			raw:  `{"refno":"test123~881225-08-1234~12 Jalan Foo~#Sample RefNo","status":"success"}`,
			want: PaymentRecord{RefNo: "test123", ExtraData: "881225-08-1234~12 Jalan Foo~#Sample RefNo", Status: StatusSuccess},
		},
		{
			name: "escaped strings, null members and unknown members are read or skipped",
			raw:  `{"refNo":"INV\u002d4","amount":null,"status":"pending","extra":{"a":[1,2,{"b":null}]},"orderNo":"N\"4"}`,
			want: PaymentRecord{RefNo: "INV-4", OrderNo: `N"4`, Status: StatusPending},
		},
		{
			name:     "an amount that does not parse is a problem, read as 0",
			raw:      `{"seller_order_no":"INV-5","amount":"1,000.00","status":"success"}`,
			want:     PaymentRecord{RefNo: "INV-5", Status: StatusSuccess},
			problems: []string{"amount"},
		},
		{
			name:     "an exponent is not an amount",
			raw:      `{"seller_order_no":"INV-5","amount":1e3,"status":"success"}`,
			want:     PaymentRecord{RefNo: "INV-5", Status: StatusSuccess},
			problems: []string{"amount"},
		},
		{
			name:     "an unknown status is kept and is a problem",
			raw:      `{"seller_order_no":"INV-6","status":"refunded"}`,
			want:     PaymentRecord{RefNo: "INV-6", Status: "refunded"},
			problems: []string{"status"},
		},
		{
			name:     "no status and no code: unconfirmed",
			raw:      `{"seller_order_no":"INV-7","amount":"1.00"}`,
			want:     PaymentRecord{RefNo: "INV-7", Amount: 100},
			problems: []string{"status"},
		},
		{
			name:     "success contradicting its code",
			raw:      `{"seller_order_no":"INV-8","status":"success","fpx_debit_auth_code":"51"}`,
			want:     PaymentRecord{RefNo: "INV-8", Status: StatusSuccess, FPXCode: "51", HasFPXCode: true},
			problems: []string{"fpx_debit_auth_code"},
		},
		{
			name:     "two names of one field disagreeing: the preferred one wins, reported",
			raw:      `{"fpx_txn_amount":"99.00","seller_order_no":"INV-9","amount":"10.00","status":"success"}`,
			want:     PaymentRecord{RefNo: "INV-9", Amount: 1000, Status: StatusSuccess},
			problems: []string{"fpx_txn_amount"},
		},
		{
			name: "the same reference under two names",
			raw:  `{"seller_order_no":"INV-10","fpx_seller_order_no":"INV-10","status":"success"}`,
			want: PaymentRecord{RefNo: "INV-10", Status: StatusSuccess},
		},
		{
			name:     "two statuses: unconfirmed",
			raw:      `{"seller_order_no":"INV-13","status":"success","fpx_debit_auth_code":"00","status":"failed"}`,
			want:     PaymentRecord{RefNo: "INV-13", FPXCode: "00", HasFPXCode: true},
			problems: []string{"status", "status"},
		},
		{
			name:     "two codes and no status: unconfirmed, not the first code's outcome",
			raw:      `{"fpx_seller_order_no":"INV-14","fpx_debit_auth_code":"00","fpx_debit_auth_code":"51"}`,
			want:     PaymentRecord{RefNo: "INV-14", FPXCode: "00", HasFPXCode: true},
			problems: []string{"fpx_debit_auth_code", "status"},
		},
		{
			name:     "a field of the wrong type is a problem",
			raw:      `{"seller_order_no":"INV-11","status":"success","agency":{"x":1}}`,
			want:     PaymentRecord{RefNo: "INV-11", Status: StatusSuccess},
			problems: []string{"agency"},
		},
		{
			name: "a time in UTC",
			raw:  `{"seller_order_no":"INV-15","status":"success","created_at":"2026-11-22T02:00:00.5Z"}`,
			want: PaymentRecord{RefNo: "INV-15", Status: StatusSuccess, Time: time.Date(2026, 11, 22, 10, 0, 0, 5e8, myt)},
		},
		{
			name: "a time with T and no offset is Malaysian",
			raw:  `{"seller_order_no":"INV-16","status":"success","created_at":"2026-11-22T10:00:00"}`,
			want: PaymentRecord{RefNo: "INV-16", Status: StatusSuccess, Time: time.Date(2026, 11, 22, 10, 0, 0, 0, myt)},
		},
		{
			name: "a day is Malaysian midnight",
			raw:  `{"seller_order_no":"INV-17","status":"success","created_date":"2026-11-22"}`,
			want: PaymentRecord{RefNo: "INV-17", Status: StatusSuccess, Time: time.Date(2026, 11, 22, 0, 0, 0, 0, myt)},
		},
		{
			name:     "14 characters that are not digits",
			raw:      `{"seller_order_no":"INV-18","status":"success","fpx_txn_time":"2026112210111x"}`,
			want:     PaymentRecord{RefNo: "INV-18", Status: StatusSuccess},
			problems: []string{"fpx_txn_time"},
		},
		{
			name:     "ten characters that are not a day",
			raw:      `{"seller_order_no":"INV-19","status":"success","created_date":"2026-13-45"}`,
			want:     PaymentRecord{RefNo: "INV-19", Status: StatusSuccess},
			problems: []string{"created_date"},
		},
		{
			name:     "an unreadable time is a problem",
			raw:      `{"seller_order_no":"INV-12","status":"success","created_at":"yesterday"}`,
			want:     PaymentRecord{RefNo: "INV-12", Status: StatusSuccess},
			problems: []string{"created_at"},
		},
		{name: "two references", raw: `{"seller_order_no":"INV-10","fpx_seller_order_no":"OTHER","status":"success"}`, err: "names two references"},
		{name: "a reference repeated differently", raw: `{"refno":"INV-10","refno":"INV-11"}`, err: "names two references"},
		{name: "two references, the preferred name second: both named", raw: `{"refno":"INV-10","seller_order_no":"INV-11"}`,
			err: `seller_order_no: differs from refno: the report row names two references`},
		{name: "no reference", raw: `{"status":"success","amount":"1.00"}`, err: "seller_order_no"},
		{name: "an empty reference", raw: `{"seller_order_no":"","status":"success"}`, err: "seller_order_no"},
		{name: "nothing before ~", raw: `{"refno":"~x","status":"success"}`, err: "reference before ~"},
		{name: "not an object", raw: `["INV-1"]`, err: "not a JSON object"},
		{name: "broken JSON", raw: `{"seller_order_no":"INV-1",`, err: "report row"},
		{name: "data after the object", raw: `{"seller_order_no":"INV-1"} x`, err: "data after the top-level value"},
		{name: "a NUL byte after the object", raw: "{\"seller_order_no\":\"INV-1\"}\x00", err: "data after the top-level value"},
		{name: "white space after the object", raw: "{\"seller_order_no\":\"INV-1\"} \n", want: PaymentRecord{RefNo: "INV-1"}, problems: []string{"status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReportRow{raw: tc.raw}.Payment()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.problems, problemFields(p), "%+v", p.Problems)
			require.Equal(t, len(tc.problems) == 0, p.Consistent())
			require.True(t, tc.want.Time.Equal(p.Time), "time %v, want %v", p.Time, tc.want.Time)
			p.Problems, p.Time, tc.want.Time = nil, time.Time{}, time.Time{}
			require.Equal(t, tc.want, p)

			rec := &OrderRecord{Raw: json.RawMessage(tc.raw)}
			q, err := rec.Payment()
			require.NoError(t, err)
			q.Problems, q.Time = nil, time.Time{}
			require.Equal(t, p, q, "the lookup's record decodes by the same rules")
		})
	}
}

// TestPaymentRecordAllocations keeps the row decoder light: a row of plain
// strings, in either shape, costs no allocation.
func TestPaymentRecordAllocations(t *testing.T) {
	row := ReportRow{raw: `{"order_no":"SB1","seller_order_no":"INV-1~cart","agency":"AG","amount":"10.50","status":"success","fpx_debit_auth_code":"00","fpx_txn_id":"T1","created_at":"2026-11-22T10:00:00+08:00","is_approved":1}`}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := row.Payment(); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	fpx := ReportRow{raw: `{"order_no":"SB2","fpx_seller_order_no":"INV-2","fpx_txn_amount":10.5,"fpx_debit_auth_code":"51","fpx_fpx_txn_id":"T2","fpx_txn_time":"20261122101112","created_date":"2026-11-22 10:00:00"}`}
	allocs = testing.AllocsPerRun(100, func() {
		if _, err := fpx.Payment(); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs, "the FPX shape too: one parse per time, no zone per row")
}

func FuzzPaymentRecord(f *testing.F) {
	for _, s := range []string{
		`{"seller_order_no":"INV-1~a~b","amount":"1.00","status":"success","fpx_debit_auth_code":"00"}`,
		`{"fpx_seller_order_no":"X","fpx_txn_amount":1.5,"fpx_txn_time":"20261122101112"}`,
		`{"refno":"~","status":null}`, `[]`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := ReportRow{raw: raw}.Payment()
		if err != nil {
			return
		}
		if p.RefNo == "" || strings.Contains(p.RefNo, "~") {
			t.Fatalf("decoded a record with base reference %q", p.RefNo)
		}
		if p.Amount < 0 {
			t.Fatalf("negative amount %d", p.Amount)
		}
	})
}

// parseRecordTime reads a callback's fpxTxnTime and a record's time in the
// gateway's zone: dates that exist, fields in range, the forms time takes
// with the layout the shape picks (runs of spaces, a one-digit hour); zero
// for anything else.
func TestParseRecordTime(t *testing.T) {
	myt := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, recordZone)
	}
	for _, tt := range []struct {
		in   string
		want time.Time // zero: refused
	}{
		{in: "2026-11-26 02:09:27", want: myt(2026, 11, 26, 2, 9, 27)},
		{in: "2026-11-26T02:09:27", want: myt(2026, 11, 26, 2, 9, 27)},
		{in: "2024-02-29 23:59:59", want: myt(2024, 2, 29, 23, 59, 59)},
		{in: "0000-01-01 00:00:00", want: myt(0, 1, 1, 0, 0, 0)},
		{in: "2026-11-26  2:09:27", want: myt(2026, 11, 26, 2, 9, 27)},
		{in: "20261126020927", want: myt(2026, 11, 26, 2, 9, 27)},
		{in: "2026-11-26", want: myt(2026, 11, 26, 0, 0, 0)},
		{in: "2026-11-26T02:09:27Z", want: time.Date(2026, 11, 26, 2, 9, 27, 0, time.UTC)},
		{in: "2026-11-26T02:09:27.5+08:00", want: myt(2026, 11, 26, 2, 9, 27).Add(500 * time.Millisecond)},
		{in: "2023-02-29 10:00:00"}, {in: "2026-13-01 10:00:00"}, {in: "2026-00-01 10:00:00"},
		{in: "2026-11-00 10:00:00"}, {in: "2026-11-31 10:00:00"}, {in: "2026-11-26 24:00:00"},
		{in: "2026-11-26 23:60:00"}, {in: "2026-11-26 23:59:60"}, {in: "2026-11-26 2:09:27x"},
		{in: "2026-11-26 02:09:2x"}, {in: "2026/11/26 02:09:27"}, {in: "2026-11-26_02:09:27"},
		{in: "2026-11-26 02-09-27"}, {in: "+026-11-26 02:09:27"}, {in: "2026-11-26 02:09:27Z"}, {in: ""},
		{in: "2026112602092x"}, {in: "26-11-2026"},
	} {
		got := parseRecordTime(tt.in)
		require.True(t, tt.want.Equal(got), "%q: %v, want %v", tt.in, got, tt.want)
		if !tt.want.IsZero() {
			_, off := got.Zone()
			_, wantOff := tt.want.Zone()
			require.Equal(t, wantOff, off, "%q: offset", tt.in)
		}
	}
}
