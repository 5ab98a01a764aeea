package brcode

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
	"github.com/boombuler/barcode/twooffive"
)

// Boleto barcode geometry. FEBRABAN prints the 44 digits as interleaved
// 2-of-5 (wide = 3 × narrow) 103 mm long and 13 mm tall, which makes the
// narrow module about 0.254 mm: exactly 3 pixels at 300 dpi. Every module is
// drawn as a whole number of pixels so scanners see clean bar ratios.
const (
	boletoModulePx  = 3   // 0.254 mm at 300 dpi
	boletoHeightPx  = 154 // 13 mm at 300 dpi
	boletoQuietMods = 16  // ~4 mm quiet zone on each side, as banks require
	qrQuietMods     = 4   // the QR specification's minimum quiet zone
)

var blackWhite = color.Palette{color.White, color.Black}

// BoletoBarcodePNG draws the barcode of a boleto (44 digits, general check
// digit verified first) as a 300-dpi interleaved 2-of-5 PNG.
func BoletoBarcodePNG(barcode44 string) ([]byte, error) {
	if err := ValidateBarcode(barcode44); err != nil {
		return nil, err
	}
	bc, err := twooffive.Encode(barcode44, true)
	if err != nil {
		return nil, fmt.Errorf("brcode: encoding interleaved 2 of 5: %w", err)
	}
	modules := bc.Bounds().Dx()
	quiet := boletoQuietMods * boletoModulePx
	img := image.NewPaletted(image.Rect(0, 0, modules*boletoModulePx+2*quiet, boletoHeightPx), blackWhite)
	for m := range modules {
		if isDark(bc, m, 0) {
			fill(img, image.Rect(quiet+m*boletoModulePx, 0, quiet+(m+1)*boletoModulePx, boletoHeightPx))
		}
	}
	return encodePNG(img)
}

// QRCodePNG draws payload as a QR code (error correction level M, as Pix
// codes are usually printed) in a size×size PNG. Modules are a whole number
// of pixels and a 4-module quiet zone is kept, so size must be at least the
// symbol width plus 8 modules.
func QRCodePNG(payload string, size int) ([]byte, error) {
	if payload == "" {
		return nil, fmt.Errorf("%w: empty QR payload", ErrFormat)
	}
	code, err := qr.Encode(payload, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("brcode: encoding QR code: %w", err)
	}
	n := code.Bounds().Dx()
	px := size / (n + 2*qrQuietMods)
	if px < 1 {
		return nil, fmt.Errorf("%w: QR image of %d px is too small for %d modules plus quiet zone", ErrFormat, size, n)
	}
	offset := (size - n*px) / 2
	img := image.NewPaletted(image.Rect(0, 0, size, size), blackWhite)
	for y := range n {
		for x := range n {
			if isDark(code, x, y) {
				fill(img, image.Rect(offset+x*px, offset+y*px, offset+(x+1)*px, offset+(y+1)*px))
			}
		}
	}
	return encodePNG(img)
}

func isDark(bc barcode.Barcode, x, y int) bool {
	b := bc.Bounds()
	return color.GrayModel.Convert(bc.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y < 128
}

func fill(img *image.Paletted, r image.Rectangle) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetColorIndex(x, y, 1)
		}
	}
}

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("brcode: encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}
