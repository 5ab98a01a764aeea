package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"parcela"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// page is what the layout needs around every page's content.
type page struct {
	Title   string
	Sandbox bool
	Company *parcela.Company // the seller whose brand the page wears; nil on errors
	Refresh int              // seconds between the script's checks while waiting for a payment; 0 for none
	State   string           // what the page shows; the script reloads when it changes
	Content any
	// The page holds a form a reload would wipe (the checkout's card): only
	// the script checks, which reloads when what the page shows changed.
	ScriptRefreshOnly bool
}

// MetaRefresh is how often a browser without JavaScript reloads a waiting
// page: less often than the script checks, since a reload interrupts
// someone copying a code.
func (p page) MetaRefresh() int { return p.Refresh * 6 }

// Theme returns the body's classes for the company's palette and mode.
func (p page) Theme() string {
	palette := "default"
	if p.Company != nil && knownPalettes[p.Company.Palette] {
		palette = p.Company.Palette
	}
	if p.Company != nil && p.Company.Dark {
		return "palette-" + palette + " theme-dark"
	}
	return "palette-" + palette
}

var knownPalettes = map[string]bool{"default": true, "blue": true, "green": true, "purple": true, "orange": true, "red": true, "pink": true, "gray": true}

var pageNames = []string{"offer", "unavailable", "order", "checkout", "payment", "error"}

func parsePages() (map[string]*template.Template, *fragments) {
	frags := &fragments{}
	funcs := template.FuncMap{
		"input":                  frags.input,
		"dueDayOptions":          frags.dueDayOptions,
		"stateOptions":           frags.stateOptions,
		"optionGroup":            frags.optionGroup,
		"customerFields":         frags.customerFields,
		"cardMonthOptions":       frags.cardMonthOptions,
		"cardYearOptions":        frags.cardYearOptions,
		"cardInstallmentOptions": frags.cardInstallmentOptions,
		"cardMonths":             func() []string { return cardMonths },
		"states":                 states,
		"dueDays":                dueDays,
		"brl":                    brl, "brlCell": brlCell, "date": date, "dateTime": dateTime, "dueWhen": dueWhen, "percent": percent, "cep": formatCEP,
		"imageURL":      imageURL,
		"methodName":    func(m string) string { return methodNames[m] },
		"billStatus":    func(s string) string { return billStatus[s] },
		"paymentStatus": func(s string) string { return paymentStatus[s] },
		"orderStatus":   func(s string) string { return orderStatus[s] },
		"payBox":        payBox,
		"payOne":        func() string { return payOne },
		"billCard":      billCard,
		"payWays":       payWays,
		"billRows":      billRows,
		"plural":        plural,
		"field":         field,
		"deref": func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		},
	}
	frags.t = template.Must(template.New("parts").Funcs(funcs).ParseFS(templateFS, "templates/parts.html"))
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		pages[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/parts.html", "templates/"+name+".html"))
	}
	return pages, frags
}

// render writes a page with status, buffered so that a template error
// becomes a clean 500 rather than half a page. The layout around the
// page's content is written in Go (layout.go).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	tag := waitingTag(status, p)
	if notModified(w, r, tag) {
		return
	}
	p.Sandbox = h.d.Environment == parcela.Sandbox
	kept := pageBuffers.Get().(*[]byte)
	defer putPageBuffer(kept)
	m := markup{b: (*kept)[:0]}
	h.assets.layoutHead(&m, p)
	buf := bytes.NewBuffer(m.b)
	if err := h.pages[name].ExecuteTemplate(buf, "content", p.Content); err != nil {
		h.logger(r).Error("rendering a page", "page", name, "error", err.Error())
		if name != "error" {
			h.renderError(w, r, http.StatusInternalServerError)
		}
		return
	}
	m.b = buf.Bytes()
	layoutFoot(&m, p)
	*kept = m.b
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	if tag != "" {
		hd.Set("ETag", tag) // only on the page rendered, never on an error page in its place
	}
	// Pages carry personal data and one-time form tokens: never cached.
	hd.Set("Cache-Control", "no-store")
	// Its length spares the chunked encoding's extra write.
	hd.Set("Content-Length", strconv.Itoa(len(m.b)))
	w.WriteHeader(status)
	w.Write(m.b)
}

// pageBuffers keeps the buffers pages are written in: a page is 2 to 30
// KB, and a new buffer each time was zeroed and grown.
var pageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// putPageBuffer keeps b for the next page unless it grew past any usual
// page. What it held is written over, never read: the next page starts
// it at length 0.
func putPageBuffer(b *[]byte) {
	if cap(*b) > 256<<10 {
		return
	}
	*b = (*b)[:0]
	pageBuffers.Put(b)
}

// errorPage is the content of a page that has nothing but a message.
type errorPage struct {
	Status  int
	Heading string
	Message string
}

var errorTexts = map[int][2]string{
	http.StatusBadRequest:            {"Formulário inválido", "Não conseguimos ler o formulário enviado. Recarregue a página e envie de novo."},
	http.StatusNotFound:              {"Página não encontrada", "Confira o endereço: o link pode estar incompleto. Se você recebeu este link do vendedor, peça um novo."},
	http.StatusMethodNotAllowed:      {"Operação não permitida", "Este endereço não aceita esta operação. Volte à página anterior e use o botão dela."},
	http.StatusForbidden:             {"Formulário expirado", "Por segurança, recarregue a página e envie o formulário de novo."},
	http.StatusTooManyRequests:       {"Muitas tentativas", "Recebemos muitos envios deste endereço. Aguarde um minuto e tente de novo."},
	http.StatusRequestEntityTooLarge: {"Formulário grande demais", "Confira os dados e envie de novo."},
	http.StatusInternalServerError:   {"Algo deu errado", "Não conseguimos mostrar esta página agora. Tente de novo em instantes."},
	http.StatusServiceUnavailable:    {"Serviço indisponível", "Não conseguimos concluir agora. Tente de novo em instantes."},
}

func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int) {
	t, ok := errorTexts[status]
	if !ok {
		t = errorTexts[http.StatusInternalServerError]
	}
	h.render(w, r, status, "error", page{Title: t[0], Content: errorPage{Status: status, Heading: t[0], Message: t[1]}})
}

// imageURL lets a seller's image through only from an https address (the
// pages' policy loads nothing else from elsewhere) or from this server.
func imageURL(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		return u
	}
	return ""
}

// initial is the letter shown in place of a missing logo.
func initial(name string) string {
	for _, r := range name {
		return strings.ToUpper(string(r))
	}
	return "?"
}

// formatLinha groups a 47-digit linha digitável as printed on a boleto.
func formatLinha(s string) string {
	if len(s) != 47 {
		return s
	}
	return s[0:5] + "." + s[5:10] + " " + s[10:15] + "." + s[15:21] + " " + s[21:26] + "." + s[26:32] + " " + s[32:33] + " " + s[33:]
}

// codeRows is how many rows a code's box needs to show it whole on the
// narrowest phone (28 characters a line at 320 px, 24 counted since the
// linha digitável breaks between its groups), for browsers that do not
// size the box to its content: a code cut off in its box can be copied
// but not read, and a linha digitável is often typed.
func codeRows(code string) int {
	return max(2, (utf8.RuneCountInString(code)+23)/24)
}

// assetSet serves the embedded stylesheet and script under names that
// change with their content, so they can be cached for long.
type assetSet struct {
	files   fs.FS
	version map[string]string
}

func loadAssets() *assetSet {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err)
	}
	a := &assetSet{files: sub, version: map[string]string{}}
	entries, _ := fs.ReadDir(sub, ".")
	for _, e := range entries {
		b, _ := fs.ReadFile(sub, e.Name())
		sum := sha256.Sum256(b)
		a.version[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return a
}

func (a *assetSet) url(name string) string {
	return "/pay/assets/" + name + "?v=" + a.version[name]
}

func (h *Handler) handleAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := fs.ReadFile(h.assets.files, name)
	if err != nil || strings.Contains(name, "/") {
		h.renderError(w, r, http.StatusNotFound)
		return
	}
	switch {
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".svg"):
		w.Header().Set("Content-Type", "image/svg+xml")
	default:
		w.Header().Set("Content-Type", http.DetectContentType(b))
	}
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}

// waitingTag is the entity tag of a page that checks for a payment: its
// state as a weak tag; "" for any other page, or a state no tag can hold.
func waitingTag(status int, p page) string {
	if p.Refresh <= 0 || status != http.StatusOK {
		return ""
	}
	return stateTag(p.State)
}

// notModified answers 304 to a waiting page's check (app.js) when the page
// still shows what the script has, its state as a weak entity tag: the
// script reloads only when the state changed, so the page it fetched every
// few seconds to compare one attribute (2 to 30 KB over a payer's phone
// plan, and its rendering) went unread. The tag goes on the full page too.
// A page without a tag (a state no tag can hold) is always sent whole.
func notModified(w http.ResponseWriter, r *http.Request, tag string) bool {
	if tag == "" {
		return false
	}
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if strings.TrimSpace(t) == tag {
			w.Header().Set("ETag", tag)
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

// stateTag is W/"state", as app.js writes it from the page's data-state;
// "" when the state holds a character a tag cannot (a space, a quote,
// anything but visible ASCII). A state is statuses and counts.
func stateTag(state string) string {
	if state == "" {
		return ""
	}
	for i := 0; i < len(state); i++ {
		if c := state[i]; c < 0x21 || c > 0x7e || c == '"' {
			return ""
		}
	}
	return `W/"` + state + `"`
}
