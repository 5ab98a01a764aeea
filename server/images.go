package server

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"parcela"
	"parcela/brcode"
)

// Payment image kinds, as in their paths.
const (
	barcodeImage = "barcode"
	pixImage     = "pix"
)

// DefaultImageCacheBytes bounds the rendered images kept in memory: some
// ten thousand of them.
const DefaultImageCacheBytes = 32 << 20

// noImage answers a missing payment, another environment's, and a payment
// without the code asked for alike: the id is all a stranger has, and the
// answer must not tell which ids exist.
var noImage = parcela.Errorf(parcela.ENOTFOUND, "no such payment image")

// handlePaymentImage serves a payment's code as PNG: the boleto's
// interleaved 2 of 5 barcode (a Pix payment's QR code on barcode.png), or
// the Pix QR code. It is public (the image goes into e-mails and pages),
// found by the payment's unguessable id, and limited per client address.
// Only a payment that can be paid has one: an ended payment (paid,
// expired, canceled) answers as a missing one, as its payment page shows
// no code, and caches keep an image an hour at most, never past the
// payment's expiry. Served for ever as immutable, an expired boleto's
// barcode looked payable in every e-mail and cache. A payment's codes
// never change once issued, so each image is rendered once and kept in a
// bounded cache; the payment is read at every request.
func (s *Server) handlePaymentImage(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		addr := addressKey(clientAddress(r, s.trustedProxies))
		if wait, ok := s.imageLimit.allow(r.Context(), logger(r), addr); !ok {
			s.tooMany(w, r, wait, "too many image requests from this address")
			return
		}
		id := parcela.LowerUUID(r.PathValue("id"))
		if !parcela.IsUUID(id) {
			writeError(w, r, noImage)
			return
		}
		p, err := s.svc.Payments.PublicPayment(r.Context(), s.env, id)
		if parcela.ErrorCode(err) == parcela.ENOTFOUND {
			err = noImage
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		now := s.clock.Now()
		if p.Status != parcela.PaymentUnpaid || !now.Before(p.ExpiresAt) {
			writeError(w, r, noImage)
			return
		}
		key := string(s.env) + "/" + id + "/" + kind
		img, ok := s.images.get(key)
		if !ok {
			png, err := renderImage(p, kind)
			if err != nil {
				writeError(w, r, err)
				return
			}
			img = s.images.put(key, png)
		}
		maxAge := min(time.Hour, p.ExpiresAt.Sub(now)) / time.Second
		w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(maxAge)))
		w.Header().Set("ETag", img.etag)
		if etagMatches(r.Header.Get("If-None-Match"), img.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.Itoa(len(img.png)))
		w.Write(img.png)
	}
}

// renderImage draws the code of kind of payment p.
func renderImage(p *parcela.Payment, kind string) ([]byte, error) {
	switch {
	case kind == pixImage && p.PixCode != nil:
		return brcode.QRCodePNG(*p.PixCode, 512)
	case kind == barcodeImage && p.Method == parcela.MethodPix && p.Barcode != nil:
		return brcode.QRCodePNG(*p.Barcode, 512)
	case kind == barcodeImage && p.BarcodeDigits != nil:
		return brcode.BoletoBarcodePNG(*p.BarcodeDigits)
	}
	return nil, noImage
}

// etagMatches reads If-None-Match (a list of tags, or *), comparing weakly
// as RFC 9110 says for this header.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// imageCache keeps rendered images, least recently used out first, within
// a bound on their bytes. A nil cache keeps nothing.
type imageCache struct {
	max   int64
	mu    sync.Mutex
	size  int64
	order *list.List // of *renderedImage, most recently used first
	byKey map[string]*list.Element
}

type renderedImage struct {
	key  string
	png  []byte
	etag string
}

func newImageCache(maxBytes int64) *imageCache {
	if maxBytes < 0 {
		return nil
	}
	if maxBytes == 0 {
		maxBytes = DefaultImageCacheBytes
	}
	return &imageCache{max: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *imageCache) get(key string) (*renderedImage, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*renderedImage), true
}

// put keeps png under key (unless it alone outgrows the cache) and returns it.
func (c *imageCache) put(key string, png []byte) *renderedImage {
	sum := sha256.Sum256(png)
	img := &renderedImage{key: key, png: png, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	if c == nil || int64(len(png)) > c.max {
		return img
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok { // rendered twice at once: keep the first
		c.order.MoveToFront(e)
		return e.Value.(*renderedImage)
	}
	c.byKey[key] = c.order.PushFront(img)
	c.size += int64(len(png))
	for c.size > c.max {
		old := c.order.Remove(c.order.Back()).(*renderedImage)
		delete(c.byKey, old.key)
		c.size -= int64(len(old.png))
	}
	return img
}
