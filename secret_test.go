package paygate

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The redaction types' own methods, called directly and through every path
// that reaches them: each fmt verb, slog's text and JSON handlers, JSON and
// text marshalling, as a value, a pointer and a field. The leak tests of
// the Client and the errors cannot see these: fmt never calls a method of a
// value in an unexported field.
func TestRedactionTypesNeverShowTheValue(t *testing.T) {
	const token = "tok-7f3a9c-AuthToken-value"
	keyHex := strings.ReplaceAll(testKeyUUID, "-", "")
	tests := []struct {
		name  string
		value any
		// leaks are texts that must never appear: the credential in the
		// forms a printer could give it.
		leaks []string
	}{
		{name: "secret", value: newSecret(token), leaks: []string{token, fmt.Sprintf("%x", token), "7f3a9c"}},
		{name: "empty secret", value: newSecret("")},
		{name: "Key", value: mustKey(t, testKeyUUID), leaks: []string{keyHex[:8], strings.ToUpper(keyHex[:8]), "\x3f\x25\x04\xe0", "[63 37 4 224", "63 37 4 224"}},
		{name: "zero Key", value: Key{}},
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v", "%-20s", "%T"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.value
			// The methods themselves.
			require.Equal(t, redacted, v.(fmt.Stringer).String(), "String")
			require.Equal(t, redacted, v.(fmt.GoStringer).GoString(), "GoString")
			require.Equal(t, slog.StringValue(redacted), v.(slog.LogValuer).LogValue(), "LogValue")
			tm, ok := v.(encoding.TextMarshaler)
			require.True(t, ok, "%T must marshal as [REDACTED] (encoding.TextMarshaler)", v)
			text, err := tm.MarshalText()
			require.NoError(t, err)
			require.Equal(t, redacted, string(text), "MarshalText")

			// Every verb, on the value, a pointer to it and an exported field.
			type holder struct{ Field any }
			for _, verb := range verbs {
				if verb == "%T" {
					continue // the type's name, not its value
				}
				require.Equal(t, redacted, fmt.Sprintf(verb, v), "verb %s on the value", verb)
				require.Contains(t, fmt.Sprintf(verb, holder{v}), redacted, "verb %s on a field", verb)
			}
			require.Equal(t, "{Field:[REDACTED]}", fmt.Sprintf("%+v", holder{v}))
			require.Equal(t, "[[REDACTED] [REDACTED]]", fmt.Sprint([]any{v, v}))
			require.Equal(t, "map[k:[REDACTED]]", fmt.Sprint(map[string]any{"k": v}))

			// slog, through real handlers: as an attribute, in a group and
			// as a struct's field.
			var text1, json1 bytes.Buffer
			for _, l := range []*slog.Logger{slog.New(slog.NewTextHandler(&text1, nil)), slog.New(slog.NewJSONHandler(&json1, nil))} {
				l.Info("credential", "cred", v, slog.Group("g", "cred", v), "holder", holder{v})
			}
			require.Contains(t, text1.String(), "cred=[REDACTED]")
			require.Contains(t, text1.String(), "g.cred=[REDACTED]")
			require.Contains(t, text1.String(), `holder={Field:[REDACTED]}`)
			var line map[string]any
			require.NoError(t, json.Unmarshal(json1.Bytes(), &line))
			require.Equal(t, redacted, line["cred"])
			require.Equal(t, map[string]any{"cred": redacted}, line["g"])
			require.Equal(t, map[string]any{"Field": redacted}, line["holder"])

			// JSON as a value, a pointer and a field.
			for _, x := range []any{v, &v, holder{v}, []any{v}, map[string]any{"k": v}} {
				out, err := json.Marshal(x)
				require.NoError(t, err)
				require.Contains(t, string(out), `"[REDACTED]"`)
			}

			var all []string
			for _, verb := range verbs {
				all = append(all, fmt.Sprintf(verb, v), fmt.Sprintf(verb, &v), fmt.Sprintf(verb, holder{v}), fmt.Sprintf(verb, &holder{v}))
			}
			all = append(all, text1.String(), json1.String())
			for _, out := range all {
				for _, leak := range tt.leaks {
					require.NotContains(t, out, leak)
				}
			}
		})
	}
}

// A credential in an unexported field (how the Client and the
// WebhookSender hold theirs) prints as an address under every verb, never
// the value: fmt cannot call its methods there, so the types hold the
// value behind a pointer.
func TestRedactionTypesInUnexportedFields(t *testing.T) {
	const token = "tok-hidden-field-value"
	hidden := struct {
		token secret
		key   Key
	}{newSecret(token), mustKey(t, testKeyUUID)}
	keyHex := strings.ReplaceAll(testKeyUUID, "-", "")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for _, out := range []string{fmt.Sprintf(verb, hidden), fmt.Sprintf(verb, &hidden)} {
			require.NotContains(t, out, token, verb)
			require.NotContains(t, out, fmt.Sprintf("%x", token), verb)
			require.NotContains(t, strings.ToLower(out), keyHex[:8], verb)
		}
	}
}
