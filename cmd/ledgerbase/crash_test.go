package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
)

// keyed is one POST under an Idempotency-Key, and what became of it.
type keyed struct {
	kind, key, path, body string
	acked                 bool // the server answered before it was killed
	first                 []byte
	firstStatus           int
}

// Retries after a crash neither double a write nor lose it: POSTs under
// Idempotency-Keys (a create, a payment, a shipment, a bulk upsert) are in
// flight when the server is killed with SIGKILL; after a restart the same
// requests are sent again, and each key's write exists exactly once — the
// acknowledged ones answer their first response, replayed. (The key's
// answer used to be stored after the write's commit, in a second
// transaction: a crash between the two made the retry write again.)
func TestIdempotentRetriesAfterKill9(t *testing.T) {
	t.Parallel()
	dbURL := crashDB(t)
	ws := mustCLI(t, dbURL, "workspace", "create", "--name", "Crash", "--plan", "business", "--commerce-mode", "--commerce-module")
	key := mustCLI(t, dbURL, "key", "create", "--workspace", ws, "--rate-limit", "0")
	db, err := database.Open(context.Background(), dbURL, database.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	const payment, units = 100, 1_000_000 // cents per payment, units on the order
	inv, err := db.Writer.Invoice.Create().SetWorkspaceID(ws).SetNumber("INV-CRASH").SetDate("2026-01-05").
		SetStatus(invoice.StatusSent).SetCurrencyCode("EUR").SetClientName("Acme").
		SetAmountInclVatCents(1 << 40).SetRemainingCents(1 << 40).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	so, err := db.Writer.SalesOrder.Create().SetWorkspaceID(ws).SetNumber("SO-CRASH").SetDate("2026-01-31").
		SetStatus(salesorder.StatusConfirmed).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	line, err := db.Writer.OrderLine.Create().SetWorkspaceID(ws).SetSalesOrderID(so.ID).SetPosition(0).
		SetSku("SKU-CRASH").SetQtyMilli(units * 1000).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var all []*keyed
	n := 0
	next := func() *keyed {
		n++
		k := &keyed{key: fmt.Sprintf("crash-%d", n)}
		switch n % 4 {
		case 0:
			k.kind, k.path, k.body = "create", "/v1/clients", fmt.Sprintf(`{"name":"crash-client-%d"}`, n)
		case 1:
			k.kind, k.path = "payment", "/v1/invoices/"+inv.ID+"/payments"
			k.body = fmt.Sprintf(`{"id":"crash-pay-%d","number":"P-%d","status":"completed","date":"2026-02-01","amount_incl_vat_cents":%d}`, n, n, payment)
		case 2:
			k.kind, k.path = "shipment", "/v1/shipments"
			k.body = fmt.Sprintf(`{"sales_order_id":%q,"lines":[{"order_line_id":%q,"qty_milli":1000}]}`, so.ID, line.ID)
		case 3:
			k.kind, k.path = "bulk", "/v1/products/bulk"
			k.body = fmt.Sprintf(`{"products":[{"name":"crash-product-%d-a"},{"name":"crash-product-%d-b"}]}`, n, n)
		}
		all = append(all, k)
		return k
	}

	const kills = 4
	unanswered := 0
	for round := range kills {
		srv := startServer(t, dbURL)
		if round > 0 {
			retryAll(t, srv.url, key, all) // the previous round's requests, again
		}
		// Workers send new keyed requests until the kill.
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		hc := &http.Client{Timeout: 10 * time.Second}
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					k := next()
					mu.Unlock()
					status, body, _, err := post(hc, srv.url, key, k)
					if err == nil {
						mu.Lock()
						k.acked, k.first, k.firstStatus = true, body, status
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(300+rand.IntN(400)) * time.Millisecond)
		srv.kill9(t)
		close(stop)
		wg.Wait()
		for _, k := range all {
			if !k.acked {
				unanswered++
			}
		}
	}
	srv := startServer(t, dbURL)
	retryAll(t, srv.url, key, all)
	srv.stop(t)

	// Each key's write exists exactly once.
	count := func(q string, args ...any) int {
		t.Helper()
		var c int
		if err := db.ReadPool.QueryRowContext(ctx, db.Rebind(q), args...).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	kinds := map[string]int{}
	for _, k := range all {
		kinds[k.kind]++
	}
	if c := count("SELECT COUNT(*) FROM clients WHERE workspace_id = ? AND name LIKE 'crash-client-%'", ws); c != kinds["create"] {
		t.Errorf("%d clients for %d keyed creates", c, kinds["create"])
	}
	if c := count("SELECT COUNT(*) FROM invoice_payments WHERE workspace_id = ?", ws); c != kinds["payment"] {
		t.Errorf("%d payments for %d keyed payments", c, kinds["payment"])
	}
	if paid := count("SELECT CAST(amount_incl_vat_cents - remaining_cents AS INTEGER) FROM invoices WHERE id = ?", inv.ID); paid != payment*kinds["payment"] {
		t.Errorf("the invoice got %d cents for %d payments of %d", paid, kinds["payment"], payment)
	}
	if c := count("SELECT COUNT(*) FROM shipments WHERE workspace_id = ?", ws); c != kinds["shipment"] {
		t.Errorf("%d shipments for %d keyed shipments", c, kinds["shipment"])
	}
	if c := count("SELECT CAST(shipped_qty_milli / 1000 AS INTEGER) FROM order_lines WHERE id = ?", line.ID); c != kinds["shipment"] {
		t.Errorf("%d units shipped for %d keyed shipments of one", c, kinds["shipment"])
	}
	if c := count("SELECT COUNT(*) FROM items WHERE workspace_id = ? AND name LIKE 'crash-product-%'", ws); c != 2*kinds["bulk"] {
		t.Errorf("%d products for %d keyed bulk upserts of two", c, kinds["bulk"])
	}
	t.Logf("%d keyed requests over %d kills, %d unanswered when killed: %v", len(all), kills, unanswered, kinds)
}

// crashDB is a database of the test's own: a SQLite file, or the suite's
// PostgreSQL schema.
func crashDB(t *testing.T) string {
	t.Helper()
	if apitest.Backend() == "postgres" {
		_, url := apitest.DB(t)
		return url
	}
	return "sqlite:" + filepath.Join(t.TempDir(), "crash.db")
}

func post(hc *http.Client, url, key string, k *keyed) (int, []byte, http.Header, error) {
	req, err := http.NewRequest("POST", url+k.path, bytes.NewReader([]byte(k.body)))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", k.key)
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header, err
}

// retryAll sends every request again under its key: each must succeed, and
// one acknowledged before must answer its first response, replayed.
func retryAll(t *testing.T, url, key string, all []*keyed) {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	for _, k := range all {
		status, body, h, err := post(hc, url, key, k)
		if err != nil {
			t.Fatalf("retry of %s: %v", k.key, err)
		}
		if status != http.StatusCreated && status != http.StatusOK {
			t.Fatalf("retry of %s %s: %d %s", k.kind, k.key, status, body)
		}
		if k.acked {
			if h.Get("Idempotent-Replayed") != "true" || status != k.firstStatus || !sameJSON(body, k.first) {
				t.Fatalf("retry of acknowledged %s %s: %d (replayed %q) %s, first %d %s",
					k.kind, k.key, status, h.Get("Idempotent-Replayed"), body, k.firstStatus, k.first)
			}
		} else {
			k.acked, k.first, k.firstStatus = true, body, status
		}
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}
