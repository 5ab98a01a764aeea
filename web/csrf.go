package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// csrfCookie holds a random browser secret. A form carries a one-time
// nonce and a token, the HMAC of the cookie and the nonce under the server's
// key: another site can neither read the cookie nor forge the token, and the
// nonce, bound to the token, names the submission so a double submit makes
// one order.
const csrfCookie = "parcela_csrf"

type csrf struct{ key []byte }

// formToken is what a form carries.
type formToken struct {
	Nonce, Token string
}

// issue returns a fresh nonce and token for a form, setting the browser
// secret first if the request has none.
func (c *csrf) issue(w http.ResponseWriter, r *http.Request, secure bool) formToken {
	return c.issueFor(w, r, secure, "")
}

// issueFor is issue keeping nonce, one this browser's form was verified
// with, when not "": a form shown again after its post (its errors, a
// failed charge) stays the same submission, so sending it again reuses
// what the first post created.
func (c *csrf) issueFor(w http.ResponseWriter, r *http.Request, secure bool, nonce string) formToken {
	secret := ""
	if ck, err := r.Cookie(csrfCookie); err == nil && validSecret(ck.Value) {
		secret = ck.Value
	} else {
		secret = randomString(32)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: secret, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
		// A page rendered later in this request (say, after an error) must
		// sign with the secret the browser is about to get.
		r.AddCookie(&http.Cookie{Name: csrfCookie, Value: secret})
	}
	if nonce == "" {
		nonce = randomString(16)
	}
	return formToken{Nonce: nonce, Token: c.sign(secret, nonce)}
}

// verify checks a posted form's nonce and token against the browser secret.
func (c *csrf) verify(r *http.Request) (nonce string, ok bool) {
	ck, err := r.Cookie(csrfCookie)
	if err != nil || !validSecret(ck.Value) {
		return "", false
	}
	nonce, token := r.PostFormValue("nonce"), r.PostFormValue("csrf")
	if nonce == "" || len(nonce) > 64 || token == "" {
		return "", false
	}
	want := c.sign(ck.Value, nonce)
	return nonce, subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}

func (c *csrf) sign(secret, nonce string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("csrf\x00" + secret + "\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func validSecret(s string) bool {
	return len(s) >= 32 && len(s) <= 64 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == ""
}

// randomString returns n random bytes, base64url-encoded.
func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
