package brcode

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The CRC-16/CCITT-FALSE check value: the CRC of the ASCII string
// "123456789" is 0x29B1 (Greg Cook's CRC catalogue,
// https://reveng.sourceforge.io/crc-catalogue/16.htm, "CRC-16/IBM-3740",
// alias CRC-16/CCITT-FALSE).
func TestCRC16CheckValue(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x29B1 {
		t.Fatalf("CRC16(123456789) = %04X, want 29B1", got)
	}
	if got := CRC16(nil); got != 0xFFFF {
		t.Fatalf("CRC16(empty) = %04X, want FFFF (the initial value)", got)
	}
}

// Examples of the Banco Central "Manual de Padrões para Iniciação do Pix"
// (https://www.bcb.gov.br/content/estabilidadefinanceira/pix/Regulamento_Pix/II_ManualdePadroesparaIniciacaodoPix.pdf):
// the static example with an EVP key (CRC 1D3D) and the dynamic example
// with a location URL (CRC 64E4). The "EMPRESA" code is the dynamic one of
// the annotated examples in
// https://gist.github.com/matheusb-comp/1efa205b3c0ffd7af1e8ce63a10e02dc
// (upper-case GUI, CRC EEAB); its static sibling is in TestParsePixRejects.
// The Google/EBANX code is a production dynamic code posted on the PagBank
// developer forum (https://developer.pagbank.com.br/v1/discuss/685ef681041f0b000f673bd0),
// and the last one, with amount, txid and a 26-02 description, is the
// README example of https://github.com/higorkonig/pix-code-js.
var publishedPix = []struct {
	code           string
	key, url, name string
	city, txid     string
	cents          int64
}{
	{
		code: "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D",
		key:  "123e4567-e12b-12d1-a456-426655440000", name: "Fulano de Tal", city: "BRASILIA", txid: "***",
	},
	{
		code: "00020101021226700014br.gov.bcb.pix2548pix.example.com/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***630464E4",
		url:  "pix.example.com/8b3da2f39a4140d1a91abd93113bd441", name: "Fulano de Tal", city: "BRASILIA", txid: "***",
	},
	{
		code: "00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a995204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB",
		url:  "pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99", name: "EMPRESA", city: "SAO PAULO", txid: "***",
	},
	{
		code: "00020101021226740014br.gov.bcb.pix2552pix.ebanx.com/qr/v2/1945050BBBDA9347ADD89F019566952E5204000053039865802BR5924Google Brasil Pagamentos6009SAO PAULO62070503***63044A78",
		url:  "pix.ebanx.com/qr/v2/1945050BBBDA9347ADD89F019566952E", name: "Google Brasil Pagamentos", city: "SAO PAULO", txid: "***",
	},
	{
		code: "00020126700014BR.GOV.BCB.PIX0136123e4567-e12b-12d1-a456-4266554400000208produto2520400005303986540575.805802BR5911Higor Konig6009Sao Paulo62190515PAGAMENTO123ABC6304A82A",
		key:  "123e4567-e12b-12d1-a456-426655440000", name: "Higor Konig", city: "Sao Paulo", txid: "PAGAMENTO123ABC", cents: 7580,
	},
}

func TestPublishedPixCodes(t *testing.T) {
	for _, ex := range publishedPix {
		code := ex.code
		pc, err := ParsePix(code)
		if err != nil {
			t.Errorf("ParsePix(%s): %v", code, err)
			continue
		}
		if pc.Key != ex.key || pc.URL != ex.url || pc.MerchantName != ex.name || pc.MerchantCity != ex.city ||
			pc.TxID != ex.txid || pc.AmountCents != ex.cents {
			t.Errorf("ParsePix(%s) = %+v", code, pc)
		}
		// Changing any single character breaks the CRC (or the structure).
		for i := range len(code) {
			broken := code[:i] + string(code[i]^1) + code[i+1:]
			if _, err := ParsePix(broken); err == nil {
				t.Errorf("corrupted code accepted: %s", broken)
			}
		}
	}
}

// The manual's two examples rebuilt byte for byte with the same field
// writer and CRC as Payload. (Payload itself always adds an amount and the
// point of initiation, which the manual's examples leave out.)
func TestReproduceBCBExamples(t *testing.T) {
	static := withCRC(tlv("00", "01") + tlv("26", tlv("00", pixGUI)+tlv("01", "123e4567-e12b-12d1-a456-426655440000")) +
		tlv("52", "0000") + tlv("53", "986") + tlv("58", "BR") + tlv("59", "Fulano de Tal") + tlv("60", "BRASILIA") +
		tlv("62", tlv("05", "***")))
	if static != publishedPix[0].code {
		t.Errorf("static example:\n got %s\nwant %s", static, publishedPix[0].code)
	}
	dynamic := withCRC(tlv("00", "01") + tlv("01", "12") + tlv("26", tlv("00", pixGUI)+tlv("25", "pix.example.com/8b3da2f39a4140d1a91abd93113bd441")) +
		tlv("52", "0000") + tlv("53", "986") + tlv("58", "BR") + tlv("59", "Fulano de Tal") + tlv("60", "BRASILIA") +
		tlv("62", tlv("05", "***")))
	if dynamic != publishedPix[1].code {
		t.Errorf("dynamic example:\n got %s\nwant %s", dynamic, publishedPix[1].code)
	}
}

func TestPayloadLayout(t *testing.T) {
	p := Pix{Key: "123e4567-e12b-12d1-a456-426655440000", MerchantName: "Fulano de Tal", MerchantCity: "BRASILIA",
		AmountCents: 12345, TxID: "PARCELA0001"}
	got, err := p.Payload()
	if err != nil {
		t.Fatal(err)
	}
	want := "000201" + "010212" + "2658" + "0014br.gov.bcb.pix" + "0136123e4567-e12b-12d1-a456-426655440000" +
		"52040000" + "5303986" + "5406123.45" + "5802BR" + "5913Fulano de Tal" + "6008BRASILIA" +
		"6215" + "0511PARCELA0001" + "6304"
	if got[:len(got)-4] != want {
		t.Fatalf("payload\n got %s\nwant %s....", got, want)
	}
	if crc := fmt.Sprintf("%04X", CRC16([]byte(want))); got[len(got)-4:] != crc {
		t.Fatalf("CRC %s, want %s", got[len(got)-4:], crc)
	}
}

func TestPayloadAmounts(t *testing.T) {
	for cents, want := range map[int64]string{1: "0.01", 10: "0.10", 100: "1.00", 123456: "1234.56", 999999999999: "9999999999.99"} {
		got, err := formatPixAmount(cents)
		if err != nil || got != want {
			t.Errorf("formatPixAmount(%d) = %q, %v; want %q", cents, got, err, want)
		}
		if back, err := parsePixAmount(got); err != nil || back != cents {
			t.Errorf("parsePixAmount(%q) = %d, %v", got, back, err)
		}
	}
	for _, cents := range []int64{0, -5, 1000000000000} {
		if _, err := formatPixAmount(cents); !errors.Is(err, ErrFormat) {
			t.Errorf("formatPixAmount(%d) err = %v", cents, err)
		}
	}
}

func TestPayloadTextFields(t *testing.T) {
	p := Pix{Key: "12345678000195", MerchantName: "  João Café & Ação Ltda — Filial São Paulo ", MerchantCity: "São José dos Campos", AmountCents: 500}
	code, err := p.Payload()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := ParsePix(code)
	if err != nil {
		t.Fatal(err)
	}
	if pc.MerchantName != "Joao Cafe & Acao Ltda - F" || pc.MerchantCity != "Sao Jose dos Ca" {
		t.Errorf("name %q (%d), city %q (%d)", pc.MerchantName, len(pc.MerchantName), pc.MerchantCity, len(pc.MerchantCity))
	}
	for i := 0; i < len(code); i++ {
		if code[i] < ' ' || code[i] > '~' {
			t.Fatalf("non-ASCII byte %q at %d in %s", code[i], i, code)
		}
	}
	if pc.TxID != "***" {
		t.Errorf("txid without TxID = %q, want ***", pc.TxID)
	}
}

// Every accented Latin letter is folded to its ASCII letter, not only the
// ones Portuguese uses, and any white space is a space: "Dvořák" was
// carried as "Dvoak", and an em space joined two words.
func TestPixNameFoldsEveryAccent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Dvořák Música":         "Dvorak Musica",
		"Escola Łódź":           "Escola Lodz",
		"Şahin Eğitim":          "Sahin Egitim",
		"Curso Ōsaka":           "Curso Osaka",
		"Joa\u0303o Cafe\u0301": "Joao Cafe", // decomposed accents
		"Ｃｕｒｓｏｓ":                "Cursos",    // full-width letters
		"Escola\u2003Música":    "Escola Musica",
		"Ação & Cia":            "Acao & Cia",
		// A decomposition is kept whole or not at all: its parts that are
		// not ASCII dropped, "½" read "12" and "㈱" "()".
		"Escola ½ Preço": "Escola 1/2 Preco",
		"Loja ㈱":         "Loja",
		"Curso ﬁnal":     "Curso final",
	} {
		if got := PixName(in); got != want {
			t.Errorf("PixName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPayloadRejects(t *testing.T) {
	ok := Pix{Key: "123e4567-e12b-12d1-a456-426655440000", MerchantName: "Parcela", MerchantCity: "Recife", AmountCents: 100, TxID: "abc123"}
	bad := map[string]func(p *Pix){
		"no key or url":    func(p *Pix) { p.Key = "" },
		"key and url":      func(p *Pix) { p.URL = "pix.example.com/x" },
		"url with scheme":  func(p *Pix) { p.Key, p.URL, p.TxID = "", "https://pix.example.com/x", "" },
		"url with txid":    func(p *Pix) { p.Key, p.URL = "", "pix.example.com/x" },
		"key too long":     func(p *Pix) { p.Key = strings.Repeat("k", 78) },
		"key with space":   func(p *Pix) { p.Key = "a b" },
		"empty name":       func(p *Pix) { p.MerchantName = " " },
		"only-accent name": func(p *Pix) { p.MerchantName = "🙂" },
		"empty city":       func(p *Pix) { p.MerchantCity = "" },
		"zero amount":      func(p *Pix) { p.AmountCents = 0 },
		"negative amount":  func(p *Pix) { p.AmountCents = -1 },
		"txid too long":    func(p *Pix) { p.TxID = strings.Repeat("a", 26) },
		"txid symbol":      func(p *Pix) { p.TxID = "abc-123" },
		"txid stars":       func(p *Pix) { p.TxID = "**" },
	}
	if _, err := ok.Payload(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range bad {
		p := ok
		mutate(&p)
		if code, err := p.Payload(); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: Payload = %q, %v; want ErrFormat", name, code, err)
		}
	}
	long := ok
	long.Key = strings.Repeat("k", 77)
	long.TxID = strings.Repeat("T", 25)
	if code, err := long.Payload(); err != nil {
		t.Errorf("maximum key and txid: %v", err)
	} else if _, err := ParsePix(code); err != nil {
		t.Errorf("maximum key and txid: %v", err)
	}
}

func TestPixRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := range 2000 {
		txid := make([]byte, 1+rng.IntN(25))
		for j := range txid {
			txid[j] = alnum[rng.IntN(len(alnum))]
		}
		p := Pix{MerchantName: fmt.Sprintf("Loja %d", i), MerchantCity: "Curitiba", AmountCents: 1 + rng.Int64N(1_000_000_00)}
		if i%2 == 0 {
			p.Key, p.TxID = fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff), string(txid)
		} else {
			p.URL = fmt.Sprintf("pix.parcela.test/qr/v2/%x", rng.Uint64())
		}
		code, err := p.Payload()
		if err != nil {
			t.Fatal(err)
		}
		pc, err := ParsePix(code)
		if err != nil {
			t.Fatalf("ParsePix(%s): %v", code, err)
		}
		wantTxID := p.TxID
		if wantTxID == "" {
			wantTxID = "***"
		}
		if pc.Key != p.Key || pc.URL != p.URL || pc.AmountCents != p.AmountCents || pc.TxID != wantTxID ||
			pc.MerchantName != p.MerchantName || pc.MerchantCity != p.MerchantCity || pc.Fields["01"] != "12" {
			t.Fatalf("round trip of %+v gave %+v", p, pc)
		}
	}
}

func TestParsePixRejects(t *testing.T) {
	good := publishedPix[0].code
	for name, code := range map[string]string{
		"empty":        "",
		"no crc":       good[:len(good)-8],
		"wrong crc":    good[:len(good)-4] + "0000",
		"truncated":    good[:20],
		"bad length":   "00020X" + good[6:],
		"not pix":      withCRC(tlv("00", "01") + tlv("26", tlv("00", "br.gov.other")+tlv("01", "x")) + tlv("58", "BR")),
		"wrong format": withCRC(tlv("00", "02") + tlv("26", tlv("00", pixGUI)+tlv("01", "x"))),
		"duplicate":    withCRC(tlv("00", "01") + tlv("26", tlv("00", pixGUI)+tlv("01", "x")) + tlv("58", "BR") + tlv("58", "BR")),
		// The gist's static example declares "6208" for the 7-character
		// "0503***"; its CRC 170E is right for those bytes, but the field
		// then swallows the "6" of "6304", so a strict reader must refuse it.
		"gist static": "00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA62080503***6304170E",
		"bad amount":  withCRC(tlv("00", "01") + tlv("26", tlv("00", pixGUI)+tlv("01", "x")) + tlv("54", "1,00")),
	} {
		if _, err := ParsePix(code); err == nil {
			t.Errorf("%s: ParsePix(%q) accepted", name, code)
		}
	}
	if _, err := ParsePix(strings.ToLower(good[:len(good)-4]) + "1d3d"); err == nil {
		// lower-casing the GUI and text changes the CRC input, so this must fail…
		t.Errorf("lower-cased code accepted")
	}
	if _, err := ParsePix(good[:len(good)-4] + "1d3d"); err != nil {
		// …while a lower-case hex CRC is the same checksum.
		t.Errorf("lower-case CRC digits rejected: %v", err)
	}
}
