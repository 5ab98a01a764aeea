package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb/sqldbtest"
	"parcela/web"
)

// A payer's code opens its own bill or order only: one bill's
// authentication code on another bill (of the same order, another order
// or another company), an order's access code on another order, a
// production bill, order, payment or offer on the sandbox's pages, and an
// offer under another company's slug are all the page of nothing, 404.
func TestPayerCodesOpenTheirOwnOnly(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		const v1 = "/external_api/v1"
		pages := web.New(web.Deps{Checkout: b.app.Checkout, Orders: b.app.Orders, CardCharges: b.app.Orders, Payments: b.app.Payments,
			Clock: b.clock, Environment: parcela.Sandbox, Links: sqldbtest.Links[parcela.Sandbox], Logger: slog.New(slog.DiscardHandler),
			Secret: []byte(strings.Repeat("k", 32))})
		get := func(path string) int {
			rec := httptest.NewRecorder()
			pages.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec.Code
		}
		post := func(path string, form url.Values) int {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			pages.ServeHTTP(rec, req)
			return rec.Code
		}
		type sale struct{ order, orderCode, bill, billCode, payment, offer, slug string }
		sell := func(base, token string) sale {
			call := func(method, path string, body any) resp { return b.send(base, token, method, path, body, nil) }
			p := call("POST", v1+"/products", productBody()).want(t, 201).JSON(t)["id"].(string)
			offer := call("POST", v1+"/offers", offerBody(p)).want(t, 201).JSON(t)
			order := call("POST", v1+"/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
			_, fin := configs(offer)
			charged := call("POST", v1+"/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
			bill := call("GET", v1+"/bills/"+billIDs(charged)[0], nil).want(t, 200).JSON(t)
			u, err := url.Parse(order["url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			o, err := url.Parse(offer["url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return sale{order: order["id"].(string), orderCode: u.Query().Get("code"), bill: bill["id"].(string),
				billCode: bill["authentication_code"].(string), payment: openPayment(t, bill)["id"].(string),
				offer: offer["id"].(string), slug: strings.Split(strings.TrimPrefix(o.Path, "/pay/"), "/")[0]}
		}
		mine, again, theirs, prod := sell(b.sandbox.URL, b.token), sell(b.sandbox.URL, b.token), sell(b.sandbox.URL, b.otherToken), sell(b.production.URL, b.prodToken)

		// Each opens its own.
		for _, s := range []sale{mine, again, theirs} {
			for _, path := range []string{
				"/checkout/bills/" + s.bill + "?code=" + s.billCode,
				"/pay/orders/" + s.order + "?code=" + s.orderCode,
				"/checkout/payments/" + s.payment,
				"/pay/" + s.slug + "/offers/" + s.offer,
			} {
				if got := get(path); got != http.StatusOK {
					t.Fatalf("GET %s = %d, want 200", path, got)
				}
			}
		}
		for name, path := range map[string]string{
			"a bill with another order's bill's code":   "/checkout/bills/" + mine.bill + "?code=" + again.billCode,
			"a bill with another company's bill's code": "/checkout/bills/" + mine.bill + "?code=" + theirs.billCode,
			"a bill with its order's access code":       "/checkout/bills/" + mine.bill + "?code=" + mine.orderCode,
			"an order with another order's code":        "/pay/orders/" + mine.order + "?code=" + again.orderCode,
			"an order with another company's code":      "/pay/orders/" + mine.order + "?code=" + theirs.orderCode,
			"an order with its bill's code":             "/pay/orders/" + mine.order + "?code=" + mine.billCode,
			"a production bill on the sandbox":          "/checkout/bills/" + prod.bill + "?code=" + prod.billCode,
			"a production order on the sandbox":         "/pay/orders/" + prod.order + "?code=" + prod.orderCode,
			"a production payment on the sandbox":       "/checkout/payments/" + prod.payment,
			"a production offer on the sandbox":         "/pay/" + prod.slug + "/offers/" + prod.offer,
			"an offer under another company's slug":     "/pay/" + theirs.slug + "/offers/" + mine.offer,
		} {
			if got := get(path); got != http.StatusNotFound {
				t.Errorf("%s: GET %s = %d, want 404", name, path, got)
			}
		}
		// A post is refused on the code before its form token is read.
		for _, m := range []string{"pix", "boleto", "card"} {
			if got := post("/checkout/bills/"+mine.bill+"/"+m, url.Values{"code": {again.billCode}}); got != http.StatusNotFound {
				t.Errorf("POST %s with another bill's code = %d, want 404", m, got)
			}
		}
		// Another bill's payment, or another order's code, opened with a
		// bill's own code shows nothing of them.
		rec := httptest.NewRecorder()
		pages.ServeHTTP(rec, httptest.NewRequest("GET", "/checkout/bills/"+mine.bill+"?code="+mine.billCode+
			"&payment="+again.payment+"&order_code="+again.orderCode, nil))
		if rec.Code != 200 || strings.Contains(rec.Body.String(), again.order) || strings.Contains(rec.Body.String(), again.orderCode) {
			t.Errorf("a bill's checkout opened with another order's code links to it (%d):\n%s", rec.Code, rec.Body)
		}
	})
}

// A whole sale through the API and the payer's pages, bad requests among
// it, logs none of the customer's personal data, no token and no payer's
// code: the lines name routes, statuses and ids.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		const v1 = "/external_api/v1"
		logs := &logBuffer{}
		log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		srv := httptest.NewServer(server.New(server.ServicesOf(b.app, b.db), server.Config{Environment: parcela.Sandbox, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec, Logger: log}))
		t.Cleanup(srv.Close)
		pages := web.New(web.Deps{Checkout: b.app.Checkout, Orders: b.app.Orders, CardCharges: b.app.Orders, Payments: b.app.Payments,
			Clock: b.clock, Environment: parcela.Sandbox, Links: sqldbtest.Links[parcela.Sandbox], Logger: log,
			Secret: []byte(strings.Repeat("k", 32))})
		call := func(method, path string, body any) resp { return b.send(srv.URL, b.token, method, path, body, nil) }
		p := call("POST", v1+"/products", productBody()).want(t, 201).JSON(t)["id"].(string)
		offer := call("POST", v1+"/offers", offerBody(p)).want(t, 201).JSON(t)
		bad := orderBody(offer["id"].(string))
		bad["order"].(map[string]any)["customer_document"] = "529.982.247-26"
		call("POST", v1+"/orders", bad).want(t, 422)
		order := call("POST", v1+"/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		_, fin := configs(offer)
		charged := call("POST", v1+"/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		bill := call("GET", v1+"/bills/"+billIDs(charged)[0], nil).want(t, 200).JSON(t)
		b.send(srv.URL, "", "GET", v1+"/bills", nil, map[string]string{"Authorization": "Bearer " + b.token + "x"}).want(t, 401)
		b.send(srv.URL, b.prodToken, "GET", v1+"/bills", nil, nil).want(t, 401)
		code := bill["authentication_code"].(string)
		orderURL, _ := url.Parse(order["url"].(string))
		for _, path := range []string{"/checkout/bills/" + bill["id"].(string) + "?code=" + code, orderURL.RequestURI(),
			"/checkout/bills/" + bill["id"].(string) + "?code=wrong" + code} {
			pages.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
		}
		call("POST", v1+"/sandbox/payments/"+openPayment(t, bill)["id"].(string)+"/pay", nil).want(t, 200)
		all := logs.b.String()
		if !strings.Contains(all, `"route"`) {
			t.Fatalf("no access line logged:\n%s", all)
		}
		for _, secret := range []string{"52998224725", "529.982.247", "maria@example.com", "98765-4321", "11987654321", "1990-05-17",
			"Maria da Silva", "Avenida Paulista", "01310", b.token, b.prodToken, code, orderURL.Query().Get("code")} {
			if strings.Contains(all, secret) {
				t.Errorf("the log holds %q:\n%s", secret, all)
			}
		}
	})
}
