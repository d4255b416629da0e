package zakat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Types are B3's zakat_type values, in its order, and each is Valid.
func TestTypes(t *testing.T) {
	var got []string
	for _, z := range Types() {
		require.True(t, z.Valid(), z)
		got = append(got, string(z))
	}
	require.Equal(t, b3Values(t, "zakat_type"), got)
	Types()[0] = "x"
	require.Equal(t, Fitrah, Types()[0], "a fresh slice each call")
}

func TestTypeValidAndFitrah(t *testing.T) {
	for _, tt := range []struct {
		z             Type
		valid, fitrah bool
	}{
		{z: Fitrah, valid: true, fitrah: true},
		{z: ZakatFitrah, valid: true, fitrah: true},
		{z: "zakat_fitrah", valid: true, fitrah: true},
		{z: ZakatEmas, valid: true},
		{z: ZakatPerak, valid: true},
		{z: ZakatTernakan, valid: true},
		{z: ""},
		{z: "perak"},
		{z: "Fitrah"},
		{z: "zakat_gaji"},
		{z: "fitrah "},
	} {
		require.Equal(t, tt.valid, tt.z.Valid(), "%q", tt.z)
		require.Equal(t, tt.fitrah, tt.z.IsFitrah(), "%q", tt.z)
	}
}
