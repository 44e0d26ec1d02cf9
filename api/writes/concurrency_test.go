package writes_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
)

// concurrently sends n requests at once and returns their responses.
func concurrently(t *testing.T, n int, do func(i int) *apitest.Response) []*apitest.Response {
	t.Helper()
	out := make([]*apitest.Response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = do(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func TestConcurrentPaymentsNeverOverpayAnInvoice(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 10000)
	// 20 payments of 700 on 10000: at most 14 fit.
	res := concurrently(t, 20, func(i int) *apitest.Response {
		return env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, payment(fmt.Sprint("c-", i), 700))
	})
	var applied int64
	accepted := 0
	for _, r := range res {
		switch r.Status {
		case http.StatusCreated:
			accepted++
			applied += 700
		case http.StatusConflict:
			r.WantError(t, http.StatusConflict, "amount_exceeds_balance")
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	status, paid, remaining := balanceOf(t, env, "/v1/invoices/"+inv, ws.Key)
	if accepted != 14 || paid != applied || remaining != 10000-applied || remaining < 0 || status != "partially_paid" {
		t.Fatalf("%d accepted, applied %d; invoice %s paid %d remaining %d", accepted, applied, status, paid, remaining)
	}
	if n := total(t, env, "/v1/invoices/"+inv+"/payments", ws.Key); n != accepted {
		t.Fatalf("%d payments stored, %d accepted", n, accepted)
	}
}

func TestConcurrentDuplicatePaymentIDsRecordOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false)
	inv := newInvoice(t, env, ws, invoice.StatusSent, 10000)
	res := concurrently(t, 20, func(int) *apitest.Response {
		return env.Do(t, "POST", "/v1/invoices/"+inv+"/payments", ws.Key, payment("same", 1000))
	})
	created, ids := 0, map[any]bool{}
	for _, r := range res {
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if r.Status == http.StatusCreated {
			created++
		}
		ids[r.JSON(t)["id"]] = true
	}
	if _, paid, _ := balanceOf(t, env, "/v1/invoices/"+inv, ws.Key); created != 1 || len(ids) != 1 || paid != 1000 {
		t.Fatalf("%d created, ids %v, paid %d", created, ids, paid)
	}
}

func TestConcurrentUpsertsOfOneExternalRefMakeOneClient(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	res := concurrently(t, 20, func(i int) *apitest.Response {
		return env.Do(t, "POST", "/v1/clients", ws.Key, map[string]any{"name": fmt.Sprint("Acme ", i), "external_ref": "crm:eu:42"})
	})
	created, ids := 0, map[any]bool{}
	for _, r := range res {
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if r.Status == http.StatusCreated {
			created++
		}
		ids[r.JSON(t)["id"]] = true
	}
	if created != 1 || len(ids) != 1 || total(t, env, "/v1/clients", ws.Key) != 1 {
		t.Fatalf("%d created, ids %v", created, ids)
	}
}

func TestConcurrentDefaultAddressChangesLeaveOneDefault(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "growth", false, false)
	cli := newClient(t, env, ws.Key)
	base := "/v1/clients/" + cli + "/addresses"
	var ids []string
	for i := range 10 {
		ids = append(ids, env.Do(t, "POST", base, ws.Key, map[string]any{"name": fmt.Sprint("A", i)}).WantStatus(t, 201).JSON(t)["id"].(string))
	}
	for _, r := range concurrently(t, 10, func(i int) *apitest.Response {
		return env.Do(t, "PATCH", base+"/"+ids[i], ws.Key, map[string]any{"name": fmt.Sprint("A", i), "default_billing": true})
	}) {
		r.WantStatus(t, http.StatusOK)
	}
	if b, _ := defaults(t, env, cli, ws.Key); len(b) != 1 {
		t.Fatalf("default billing addresses %v, want one", b)
	}
}
