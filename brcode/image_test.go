package brcode

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

func decodePNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

func TestQRCodePNGDecodes(t *testing.T) {
	p := Pix{Key: "123e4567-e12b-12d1-a456-426655440000", MerchantName: "Parcela Cobranças", MerchantCity: "São Paulo",
		AmountCents: 1999, TxID: "PARCELA2026INV000123"}
	payload, err := p.Payload()
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{200, 300, 512} {
		data, err := QRCodePNG(payload, size)
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, data)
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
			t.Errorf("image is %v, want %dx%d", b, size, size)
		}
		bmp, err := gozxing.NewBinaryBitmapFromImage(img)
		if err != nil {
			t.Fatal(err)
		}
		res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
		if err != nil {
			t.Fatalf("size %d: QR not readable: %v", size, err)
		}
		if res.GetText() != payload {
			t.Fatalf("QR text %q, want %q", res.GetText(), payload)
		}
		if level := res.GetResultMetadata()[gozxing.ResultMetadataType_ERROR_CORRECTION_LEVEL]; level != "M" {
			t.Errorf("error correction level %v, want M", level)
		}
	}
	if _, err := QRCodePNG(payload, 40); !errors.Is(err, ErrFormat) {
		t.Errorf("tiny image: err = %v", err)
	}
	if _, err := QRCodePNG("", 200); !errors.Is(err, ErrFormat) {
		t.Errorf("empty payload: err = %v", err)
	}
}

// i2of5 holds the standard interleaved 2-of-5 digit patterns, true = wide
// (written out independently of the encoder's table).
var i2of5 = map[[5]bool]byte{}

func init() {
	for d, p := range []string{"NNWWN", "WNNNW", "NWNNW", "WWNNN", "NNWNW", "WNWNN", "NWWNN", "NNNWW", "WNNWN", "NWNWN"} {
		var k [5]bool
		for i := range 5 {
			k[i] = p[i] == 'W'
		}
		i2of5[k] = byte('0' + d)
	}
}

// decodeI2of5 reads one scan line across the middle of img: it measures
// the bar and space widths, classifies them as narrow or wide, checks the
// start (bar-space-bar-space, all narrow) and stop (wide bar, narrow space,
// narrow bar) patterns and decodes the pairs in between: in each group of
// ten elements the five bars encode the first digit, the five spaces the
// second.
func decodeI2of5(img image.Image) (string, error) {
	b := img.Bounds()
	y := (b.Min.Y + b.Max.Y) / 2
	var runs []int
	var darks []bool
	for x := b.Min.X; x < b.Max.X; x++ {
		dark := color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y < 128
		if n := len(runs); n > 0 && darks[n-1] == dark {
			runs[n-1]++
		} else {
			runs, darks = append(runs, 1), append(darks, dark)
		}
	}
	if len(runs) < 3 || darks[0] || darks[len(darks)-1] {
		return "", errors.New("no quiet zone on both sides")
	}
	quietL, quietR := runs[0], runs[len(runs)-1]
	runs = runs[1 : len(runs)-1]
	narrow := runs[0]
	for _, r := range runs {
		narrow = min(narrow, r)
	}
	if quietL < 10*narrow || quietR < 10*narrow {
		return "", fmt.Errorf("quiet zones %d/%d px narrower than 10 modules of %d px", quietL, quietR, narrow)
	}
	wide := make([]bool, len(runs))
	for i, r := range runs {
		switch {
		case r == narrow:
		case r >= 2*narrow && r <= 3*narrow:
			wide[i] = true
		default:
			return "", fmt.Errorf("element %d is %d px, neither narrow (%d) nor wide", i, r, narrow)
		}
	}
	n := len(wide)
	if n < 7 || (n-7)%10 != 0 {
		return "", fmt.Errorf("%d elements do not make start + pairs + stop", n)
	}
	if wide[0] || wide[1] || wide[2] || wide[3] {
		return "", errors.New("bad start pattern")
	}
	if !wide[n-3] || wide[n-2] || wide[n-1] {
		return "", errors.New("bad stop pattern")
	}
	var out []byte
	for i := 4; i < n-3; i += 10 {
		var bars, spaces [5]bool
		for j := range 5 {
			bars[j], spaces[j] = wide[i+2*j], wide[i+2*j+1]
		}
		d1, ok1 := i2of5[bars]
		d2, ok2 := i2of5[spaces]
		if !ok1 || !ok2 {
			return "", fmt.Errorf("invalid pattern at element %d", i)
		}
		out = append(out, d1, d2)
	}
	return string(out), nil
}

func TestBoletoBarcodePNGDecodes(t *testing.T) {
	codes := []string{publishedBoletos[0].barcode, publishedBoletos[1].barcode}
	rng := rand.New(rand.NewPCG(21, 34))
	for range 20 {
		bc, err := randomBoleto(rng).Barcode()
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, bc)
	}
	for _, bc := range codes {
		data, err := BoletoBarcodePNG(bc)
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, data)
		// 405 modules (start 4 + 22 pairs × 18 + stop 5) plus 2 × 16 quiet,
		// 3 px each; 13 mm at 300 dpi tall.
		if b := img.Bounds(); b.Dx() != (405+32)*3 || b.Dy() != 154 {
			t.Errorf("image is %v", b)
		}
		got, err := decodeI2of5(img)
		if err != nil || got != bc {
			t.Fatalf("decoded %q, %v; want %q", got, err, bc)
		}
	}
	bad := publishedBoletos[0].barcode[:4] + "9" + publishedBoletos[0].barcode[5:]
	if _, err := BoletoBarcodePNG(bad); !errors.Is(err, ErrCheckDigit) {
		t.Errorf("barcode with a wrong DV: err = %v", err)
	}
	if _, err := BoletoBarcodePNG("123"); !errors.Is(err, ErrFormat) {
		t.Errorf("short barcode: err = %v", err)
	}
}
