// Package fielderr holds the text of a field problem and of a list of
// them, shared by paygate's and zakat's FieldError and ValidationError
// (same shape, same Error text), and the cap on the value an error repeats.
package fielderr

import (
	"strconv"
	"strings"
)

// MaxValue caps how much of an offending value an error repeats, in bytes.
const MaxValue = 64

// Clip is value cut at MaxValue bytes (with "…"), or a copy of it, so that
// an error never pins the input it was read from.
func Clip(value string) string {
	if len(value) > MaxValue {
		return value[:MaxValue] + "…"
	}
	return strings.Clone(value)
}

// Text formats one problem as `field: rule (value "v")`, "(body)" for an
// empty field and no value part for an empty value.
func Text(field, rule, value string) string {
	var b strings.Builder
	if field == "" {
		b.WriteString("(body)")
	} else {
		b.WriteString(field)
	}
	b.WriteString(": ")
	b.WriteString(rule)
	if value != "" {
		b.WriteString(" (value ")
		b.WriteString(strconv.Quote(value))
		b.WriteString(")")
	}
	return b.String()
}

// List joins problems, one per line after a count:
// "paygate: 2 validation problems\n\t...".
func List[E error](problems []E) string {
	var b strings.Builder
	b.WriteString("paygate: ")
	b.WriteString(strconv.Itoa(len(problems)))
	if len(problems) == 1 {
		b.WriteString(" validation problem")
	} else {
		b.WriteString(" validation problems")
	}
	for _, p := range problems {
		b.WriteString("\n\t")
		b.WriteString(p.Error())
	}
	return b.String()
}
