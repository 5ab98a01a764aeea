package brcode

import "testing"

func TestValidCNPJ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"11222333000181", true},
		{"11.222.333/0001-81", true},
		{"11 222 333 0001 81", true},
		{"11222333000182", false}, // second check digit off by one
		{"11222333000191", false}, // first check digit off by one
		{"1122233300018", false},  // 13 digits
		{"112223330001811", false},
		{"00000000000000", false}, // satisfies the check digits, never issued
		{"11111111111111", false},
		{"", false},
		{"11222333000a81", false}, // lower case is not a CNPJ character
		{"12ABC34501DE35", true},  // the Receita Federal's alphanumeric example
		{"12.ABC.345/01DE-35", true},
		{"12ABC34501DE36", false},
		{"12ABC34501DE3A", false}, // check digits stay digits
		{"AAAAAAAAAAAAAA", false},
		{"11222333000181\x00", false},
	}
	for _, tt := range tests {
		if got := ValidCNPJ(tt.in); got != tt.want {
			t.Errorf("ValidCNPJ(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
