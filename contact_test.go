package parcela

import (
	"strings"
	"testing"
)

func TestParsePhone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "" when refused
	}{
		{"11987654321", "11987654321"},
		{"(11) 98765-4321", "11987654321"},
		{"+55 11 98765-4321", "11987654321"},
		{"+55 (11) 98765-4321", "11987654321"},
		{"55 11 98765 4321", "11987654321"},
		{"5511987654321", "11987654321"},
		{"(011) 98765-4321", "11987654321"},
		{"1132345678", "1132345678"}, // São Paulo landline
		{"+55 21 2345-6789", "2123456789"},
		{"551132345678", "1132345678"},
		{"5532345678", "5532345678"}, // area code 55 (RS), not the country
		{"55987654321", "55987654321"},
		{"+55 99 91234-5678", "99912345678"},
		{"11 8765-4321", ""},       // an old mobile without its 9
		{"11 18765-4321", ""},      // 11 digits without the 9
		{"10 98765-4321", ""},      // no area code 10
		{"20 98765-4321", ""},      // no area code 20
		{"23 3234-5678", ""},       // no area code 23
		{"+1 415 555 0100", ""},    // not Brazil
		{"+55 11 98765-43210", ""}, // 12 digits after the country
		{"987654321", ""},          // no area code
		{"11.98765.4321", ""},      // dots are not phone punctuation
		{"11 98765-4321 ext 2", ""},
		{"11 98765\x004321", ""},
		{"", ""},
		{"++5511987654321", ""},
		{"11 9876+54321", ""},
	}
	for _, tt := range tests {
		got, msg := ParsePhone(tt.in)
		if got != tt.want || (tt.want == "") != (msg != "") {
			t.Errorf("ParsePhone(%q) = %q, %q; want %q", tt.in, got, msg, tt.want)
		}
	}
	if len(areaCodes) != 67 {
		t.Errorf("%d area codes, want Brazil's 67", len(areaCodes))
	}
}

func TestValidEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"maria@example.com", true},
		{"maria.silva+curso@escola.com.br", true},
		{"ana@sub-domain.example.org", true},
		{"joão@exemplo.com.br", true},
		{"maria@localhost", false},    // no top-level domain
		{"maria@example.c", false},    // one-letter TLD
		{"maria@example.c0m", false},  // TLD with a digit
		{"maria@example.123", false},  // numeric TLD
		{"maria@my_host.com", false},  // "_" in the domain
		{"maria@example..com", false}, // empty label
		{"maria@-example.com", false}, // leading hyphen
		{"maria@example-.com", false}, // trailing hyphen
		{"maria@.example.com", false}, // leading dot
		{"Maria <maria@example.com>", false},
		{"maria@example.com\x00", false},
		{"maria", false},
		{"@example.com", false},
		{"maria@[127.0.0.1]", false},
		{strings.Repeat("a", 64) + "@example.com", true},  // the most a mailbox's name may be (RFC 5321)
		{strings.Repeat("a", 65) + "@example.com", false}, // no server delivers to it
		{strings.Repeat("ã", 32) + "@example.com", true},  // 64 bytes of UTF-8
		{strings.Repeat("ã", 33) + "@example.com", false},
	}
	for _, tt := range tests {
		if got := validEmail(tt.in); got != tt.want {
			t.Errorf("validEmail(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestZipcodeInState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		zipcode, uf string
		want        bool
	}{
		{"01310100", "SP", true}, // Avenida Paulista
		{"13010000", "SP", true}, // Campinas
		{"01310100", "RJ", false},
		{"20040002", "RJ", true},
		{"29000000", "ES", true},
		{"30130000", "MG", true},
		{"40000000", "BA", true},
		{"49000000", "BA", false},
		{"49000000", "SE", true},
		{"68900000", "AP", true},
		{"68899999", "PA", true},
		{"69300000", "RR", true},
		{"69300000", "AM", false},
		{"69400000", "AM", true},
		{"69900000", "AC", true},
		{"70040010", "DF", true},
		{"72800000", "GO", true},
		{"73000000", "DF", true},
		{"73700000", "GO", true},
		{"76800000", "RO", true},
		{"78900000", "RO", true},
		{"78000000", "MT", true},
		{"77000000", "TO", true},
		{"79000000", "MS", true},
		{"80000000", "PR", true},
		{"88000000", "SC", true},
		{"90000000", "RS", true},
		{"99999999", "RS", true},
		{"00000000", "SP", false},
		{"00999999", "SP", false},
		{"0131010", "SP", false},
		{"01310100", "XX", false},
	}
	for _, tt := range tests {
		if got := ZipcodeInState(tt.zipcode, tt.uf); got != tt.want {
			t.Errorf("ZipcodeInState(%s, %s) = %v, want %v", tt.zipcode, tt.uf, got, tt.want)
		}
	}
	// The ranges do not overlap: a zipcode belongs to one state at most.
	for prefix := 0; prefix <= 99999; prefix += 7 {
		n := 0
		for _, ranges := range zipcodeRanges {
			for _, r := range ranges {
				if prefix >= r[0] && prefix <= r[1] {
					n++
				}
			}
		}
		if n > 1 {
			t.Fatalf("zipcode prefix %05d is in %d states", prefix, n)
		}
	}
	if len(zipcodeRanges) != 27 {
		t.Errorf("%d states, want 27 (26 and the Federal District)", len(zipcodeRanges))
	}

	a := &Address{Zipcode: "20040002", City: City{Name: "São Paulo", State: State{Acronym: "SP"}}}
	err := CheckZipcodeState("order.address.zipcode", a)
	if e, ok := err.(*Error); !ok || e.Code != EINVALID || e.Fields[0].Field != "order.address.zipcode" {
		t.Errorf("CheckZipcodeState(RJ zipcode, SP city) = %v, want a validation error on order.address.zipcode", err)
	}
	a.Zipcode = "01310100"
	if err := CheckZipcodeState("order.address.zipcode", a); err != nil {
		t.Errorf("CheckZipcodeState(SP zipcode, SP city) = %v", err)
	}
}
