package server_test

import (
	"fmt"
	"sync"
	"testing"

	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// One Idempotency-Key sent at once with two different requests (two
// orders' charges, to two instances): at most one runs.
func TestConcurrentKeyReusedAtOnceRunsOne(t *testing.T) {
	t.Parallel()
	eachConcEngine(t, concurrentKeyReusedAtOnceRunsOne)
}

func concurrentKeyReusedAtOnceRunsOne(t *testing.T, engine sqldb.Dialect) {
	b := setup(t, engine)
	b.skipContract = true
	other := b.otherInstance(t).URL
	offer := b.call("POST", "/external_api/v1/offers", func() map[string]any {
		ob := offerBody(b.product()["id"].(string))
		delete(ob["offer"].(map[string]any), "seats")
		return ob
	}()).want(t, 201).JSON(t)
	up, _ := configs(offer)
	for round := 0; round < 15; round++ {
		var ids [2]string
		for i := range ids {
			ids[i] = b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)["id"].(string)
		}
		key := map[string]string{"Idempotency-Key": fmt.Sprintf("reuse-%d-%s", round, sqldbtest.Suffix())}
		res := atOnceOnEach(b.sandbox.URL, other, func(i int, base string) resp {
			return b.send(base, b.token, "POST", "/external_api/v1/orders/"+ids[i]+"/charge", chargeBody(up, "pix", 1), key)
		})
		charged := 0
		for _, id := range ids {
			if b.call("GET", "/external_api/v1/orders/"+id, nil).want(t, 200).JSON(t)["status"] != "pending" {
				charged++
			}
		}
		if charged > 1 {
			t.Errorf("round %d: one key charged both orders: %d %s / %d %s", round, res[0].Status, errCode(res[0]), res[1].Status, errCode(res[1]))
		}
		for i, r := range res {
			if r.Status >= 500 {
				t.Errorf("round %d: answer %d %d %s", round, i, r.Status, r.Body)
			}
		}
	}
}

// The same for PATCH, whose key is claimed with its write: two offers
// renamed at once under one key, at most one rename stands.
func TestConcurrentKeyReusedAtOnceOnPatchRunsOne(t *testing.T) {
	t.Parallel()
	eachConcEngine(t, concurrentKeyReusedAtOnceOnPatchRunsOne)
}

func concurrentKeyReusedAtOnceOnPatchRunsOne(t *testing.T, engine sqldb.Dialect) {
	b := setup(t, engine)
	b.skipContract = true
	other := b.otherInstance(t).URL
	prod := b.product()["id"].(string)
	var offers [2]string
	for i := range offers {
		offers[i] = b.call("POST", "/external_api/v1/offers", offerBody(prod)).want(t, 201).JSON(t)["id"].(string)
	}
	for round := 0; round < 20; round++ {
		key := map[string]string{"Idempotency-Key": fmt.Sprintf("reuse-p-%d-%s", round, sqldbtest.Suffix())}
		name := fmt.Sprintf("Turma %d", round)
		res := atOnceOnEach(b.sandbox.URL, other, func(i int, base string) resp {
			return b.send(base, b.token, "PATCH", "/external_api/v1/offers/"+offers[i], map[string]any{"offer": map[string]any{"name": name}}, key)
		})
		renamed := 0
		for _, id := range offers {
			if b.call("GET", "/external_api/v1/offers/"+id, nil).want(t, 200).JSON(t)["name"] == name {
				renamed++
			}
		}
		if renamed > 1 {
			t.Errorf("round %d: one key renamed both offers: %d %s / %d %s", round, res[0].Status, errCode(res[0]), res[1].Status, errCode(res[1]))
		}
		for i, r := range res {
			if r.Status >= 500 {
				t.Errorf("round %d: answer %d %d %s", round, i, r.Status, r.Body)
			}
		}
	}
}

// atOnceOnEach sends send(0, one) and send(1, other) at the same instant,
// one to each instance, and returns their answers.
func atOnceOnEach(one, other string, send func(i int, base string) resp) [2]resp {
	var res [2]resp
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, base := range [2]string{one, other} {
		wg.Go(func() {
			<-start
			res[i] = send(i, base)
		})
	}
	close(start)
	wg.Wait()
	return res
}
