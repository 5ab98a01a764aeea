package brcode

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestValidCPF(t *testing.T) {
	valid := []string{
		"52998224725",    // the CPF used in most published validator examples
		"529.982.247-25", // the same, formatted
		"111.444.777-35", // the worked example of many CPF tutorials
		"12345678909",
		"00000000191",
	}
	for _, c := range valid {
		if !ValidCPF(c) {
			t.Errorf("ValidCPF(%q) = false", c)
		}
	}
	invalid := []string{
		"52998224724", "52998224715", "5299822472", "529982247250", "",
		"5299822472a", "529,982,247-25",
		"00000000000", "11111111111", "99999999999", "333.333.333-33",
	}
	for _, c := range invalid {
		if ValidCPF(c) {
			t.Errorf("ValidCPF(%q) = true", c)
		}
	}
}

func TestCPFCheckDigits(t *testing.T) {
	if dv, err := CPFCheckDigits("529982247"); err != nil || dv != "25" {
		t.Errorf("CPFCheckDigits(529982247) = %q, %v", dv, err)
	}
	for _, bad := range []string{"", "52998224", "5299822470", "52998224x"} {
		if _, err := CPFCheckDigits(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("CPFCheckDigits(%q) err = %v", bad, err)
		}
	}
}

// Every CPF built from random first digits validates, and no other pair of
// check digits does for the same nine digits.
func TestGeneratedCPFs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for i := range 5000 {
		base := fmt.Sprintf("%09d", rng.IntN(1_000_000_000))
		dv, err := CPFCheckDigits(base)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(base, base[:1]) == 9 {
			continue // repeated-digit sequences are rejected by design
		}
		if !ValidCPF(base + dv) {
			t.Fatalf("generated CPF %s%s invalid", base, dv)
		}
		if i%50 != 0 {
			continue
		}
		for other := range 100 {
			if s := fmt.Sprintf("%02d", other); s != dv && ValidCPF(base+s) {
				t.Fatalf("CPF %s%s valid besides %s%s", base, s, base, dv)
			}
		}
	}
}

func TestNormalizeDigits(t *testing.T) {
	for in, want := range map[string]string{
		"529.982.247-25":      "52998224725",
		"12.345.678/0001-95":  "12345678000195",
		" 34191.09008 63571 ": "341910900863571",
		"12a-3":               "12a3",
	} {
		if got := NormalizeDigits(in); got != want {
			t.Errorf("NormalizeDigits(%q) = %q, want %q", in, got, want)
		}
	}
}
