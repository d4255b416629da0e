// Package webhooktime reads the `time` of a bank webhook transaction
// (docs/protocol.md B2): the rule behind the root package's
// parseWebhookTime, which its tests (webhook_time_test.go) hold in full;
// this package's own tests pin each form.
package webhooktime

import "time"

// Parse reads a webhook `time` (docs/protocol.md B2: "ISO 8601
// with a time-zone offset") in the forms docs/assumptions.md A-webhook-time
// lists: the extended date and time YYYY-MM-DDThh:mm, optionally :ss and
// then optionally a fraction of any length, then the offset Z, ±hh:mm or
// ±hhmm (PHP's DATE_ISO8601 writes 2024-01-02T03:04:05+0800). The date must
// exist (no February 30), hours are 00-23, minutes and seconds 00-59, and
// the offset's hours 00-23; a time without an offset is refused, and so is
// a comma before the fraction, which ISO 8601 allows (docs/assumptions.md
// A-webhook-time-comma). The schema's `time` pattern
// (zakat.Validator.Schema) states the same rule. Digits beyond the ninth of
// a fraction are dropped (time.Time holds nanoseconds).
func Parse(s string) (time.Time, bool) {
	// YYYY-MM-DDThh:mm is 16 bytes; the shortest offset is one more.
	if len(s) < 17 {
		return time.Time{}, false
	}
	year, month, day, hour, minute, ok := webhookDateTime(s[:16])
	if !ok {
		return time.Time{}, false
	}
	sec, nsec, rest, ok := webhookSeconds(s[16:])
	if !ok {
		return time.Time{}, false
	}
	loc, ok := webhookOffset(rest)
	if !ok {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), true
}

// webhookDateTime reads the 16 bytes YYYY-MM-DDThh:mm: a date that
// exists, hours 00-23, minutes 00-59.
func webhookDateTime(s string) (year, month, day, hour, minute int, ok bool) {
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' {
		return 0, 0, 0, 0, 0, false
	}
	year, ok1 := num(s[0:4])
	month, ok2 := num(s[5:7])
	day, ok3 := num(s[8:10])
	hour, ok4 := num(s[11:13])
	minute, ok5 := num(s[14:16])
	ok = ok1 && ok2 && ok3 && ok4 && ok5 && dateExists(year, month, day) && hour <= 23 && minute <= 59
	return year, month, day, hour, minute, ok
}

// dateExists reports whether the day of the month of the year exists
// (proleptic Gregorian): no February 30.
func dateExists(year, month, day int) bool {
	return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(time.Month(month), year)
}

// webhookSeconds reads what may follow hh:mm before the offset: nothing, or
// :ss (00-59) optionally followed by a fraction. rest is the offset.
func webhookSeconds(s string) (sec, nsec int, rest string, ok bool) {
	if s[0] != ':' {
		return 0, 0, s, true
	}
	if len(s) < 3 {
		return 0, 0, "", false
	}
	if sec, ok = num(s[1:3]); !ok || sec > 59 {
		return 0, 0, "", false
	}
	if rest = s[3:]; rest == "" || rest[0] != '.' {
		return sec, 0, rest, true
	}
	nsec, rest, ok = webhookFraction(rest[1:])
	return sec, nsec, rest, ok
}

// webhookFraction reads the digits of a fraction of a second (at least
// one) as nanoseconds, dropping those beyond the ninth; rest follows them.
func webhookFraction(s string) (nsec int, rest string, ok bool) {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		if n < 9 {
			nsec = nsec*10 + int(s[n]-'0')
		}
		n++
	}
	for range 9 - n { // none past the ninth digit
		nsec *= 10
	}
	return nsec, s[n:], n > 0 // a dot without digits is refused
}

// webhookOffset reads the offset that ends a webhook time: Z, ±hh:mm or
// ±hhmm, with hours 00-23 and minutes 00-59.
func webhookOffset(s string) (*time.Location, bool) {
	if s == "Z" {
		return time.UTC, true
	}
	if len(s) != 5 && len(s) != 6 || s[0] != '+' && s[0] != '-' {
		return nil, false
	}
	mm := s[3:]
	if len(s) == 6 {
		if s[3] != ':' {
			return nil, false
		}
		mm = s[4:]
	}
	h, ok1 := num(s[1:3])
	m, ok2 := num(mm)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return nil, false
	}
	offset := (h*60 + m) * 60
	if s[0] == '-' {
		offset = -offset
	}
	return time.FixedZone("", offset), true
}

// num reads a string of ASCII digits (false if any byte is not one).
func num(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// daysIn is the number of days of month m in year y (proleptic Gregorian).
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
