package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// sample is what the requests pick from: a fixed-seed sample of the seeded
// invoices and the sizes of the tables the scenarios read.
type sample struct {
	invoices  []invoiceRef
	payable   []string  // ids of invoices that take payments and have an open balance
	shippable []lineRef // order lines still to ship, on orders that ship
	counts    map[string]int64
}

type invoiceRef struct{ id, number, client string }

// lineRef is an order line and its order.
type lineRef struct{ id, order string }

var countedTables = []string{"invoices", "clients", "sales_orders", "order_lines", "items", "variants"}

func (s *sample) describe() string {
	parts := make([]string, len(countedTables))
	for i, t := range countedTables {
		parts[i] = fmt.Sprintf("%d %s", s.counts[t], t)
	}
	return strings.Join(parts, ", ")
}

// sampleData reservoir-samples 10,000 invoices in id order, so the same
// seed picks the same records on every database.
func sampleData(ctx context.Context, db *database.DB, wsID string, seed uint64) (*sample, error) {
	const n = 10_000
	s := &sample{counts: map[string]int64{}}
	for _, t := range countedTables {
		var c int64
		if err := db.ReadPool.QueryRowContext(ctx, db.Rebind("SELECT COUNT(*) FROM "+t+" WHERE workspace_id = ?"), wsID).Scan(&c); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		s.counts[t] = c
	}
	rows, err := db.ReadPool.QueryContext(ctx, db.Rebind(
		"SELECT id, number, client_name, status, remaining_cents FROM invoices WHERE workspace_id = ? ORDER BY id"), wsID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	rng := rand.New(rand.NewPCG(seed, 7))
	seen, open := 0, 0
	for rows.Next() {
		var r invoiceRef
		var status string
		var remaining int64
		if err := rows.Scan(&r.id, &r.number, &r.client, &status, &remaining); err != nil {
			return nil, err
		}
		seen++
		if len(s.invoices) < n {
			s.invoices = append(s.invoices, r)
		} else if j := rng.IntN(seen); j < n {
			s.invoices[j] = r
		}
		// Every state that takes a payment: at scale few are "sent", and
		// sampling those alone would make one invoice hot.
		if (status == "sent" || status == "overdue" || status == "partially_paid") && remaining >= 1000 {
			open++
			if len(s.payable) < n {
				s.payable = append(s.payable, r.id)
			} else if j := rng.IntN(open); j < n {
				s.payable[j] = r.id
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(s.invoices) == 0 {
		return nil, errNoData
	}
	if len(s.payable) < min(n, len(s.invoices)/10) {
		return nil, fmt.Errorf("only %d invoices with an open balance to record payments on", len(s.payable))
	}
	// A shipment ships one thousandth of a line: every line has at least
	// 500 of them left, enough for every round.
	var l lineRef
	return s, database.EachRow(ctx, db.ReadPool, db.Rebind(`SELECT l.id, l.sales_order_id FROM order_lines l JOIN sales_orders o ON o.id = l.sales_order_id
		WHERE o.workspace_id = ? AND o.status IN ('confirmed', 'partially_shipped') AND l.qty_milli - l.shipped_qty_milli >= 500 ORDER BY l.id LIMIT 10000`),
		[]any{wsID}, []any{&l.id, &l.order}, func() { s.shippable = append(s.shippable, l) })
}

func (s *sample) invoice(r *rand.Rand) invoiceRef { return s.invoices[r.IntN(len(s.invoices))] }

func status(codes ...int) func(int) bool {
	return func(c int) bool { return slices.Contains(codes, c) }
}

func atLeast(ratio float64) func(result) bool {
	return func(r result) bool { return r.ratio >= ratio }
}

func p99Within(ms float64) func(result) bool { return func(r result) bool { return r.p99 <= ms } }

func both(a, b func(result) bool) func(result) bool {
	return func(r result) bool { return a(r) && b(r) }
}

// eventCost is issue 20's target for recording events: at least 0.85 of
// the throughput of the --against build without them (else not judged).
func eventCost(r result) bool { return r.against == 0 || r.against >= 0.85 }

// scenarios are the rows of issue 7, in the order they are printed.
func scenarios(env *benchEnv) []scenario {
	d, auth := env.data, env.auth
	get := func(path string) request { return request{method: "GET", path: path, auth: auth} }
	getInvoice := func(r *rand.Rand) request { return get("/v1/invoices/" + d.invoice(r).id) }
	listInvoices := func(r *rand.Rand) request {
		return get("/v1/invoices?limit=25&offset=" + strconv.Itoa(r.IntN(20)*25))
	}
	deep := min(500_000, d.counts["invoices"]/2)
	createClient := func(r *rand.Rand) request {
		n := r.Uint64()
		return request{method: "POST", path: "/v1/clients", auth: auth,
			body: fmt.Appendf(nil, `{"name":"Bench Client %s-%x","email":"bench-%s-%x@example.com"}`, env.nonce, n, env.nonce, n)}
	}
	payment := func(r *rand.Rand) request {
		id := d.payable[r.IntN(len(d.payable))]
		return request{method: "POST", path: "/v1/invoices/" + id + "/payments", auth: auth,
			body: fmt.Appendf(nil, `{"id":"bench-%s-%x","number":"PAY-%x","status":"completed","date":"2026-01-15","amount_incl_vat_cents":1}`,
				env.nonce, r.Uint64(), r.Uint32())}
	}
	bulk := func(r *rand.Rand) request {
		b := []byte(`{"products":[`)
		batch := r.Uint64()
		for i := 0; i < 100; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"name":"Bench Tee %d","sku":"BT-%s-%x-%d","unit_price_cents":%d,"brand":"Bench",`+
				`"variant_axes":[{"code":"size","name":"Size","values":["S","M","L"]},{"code":"color","name":"Color","values":["red","blue"]}]}`,
				i, env.nonce, batch, i, 1000+r.IntN(9000))
		}
		return request{method: "POST", path: "/v1/products/bulk", auth: auth, body: append(b, "]}"...)}
	}
	shipment := func(r *rand.Rand) request {
		if len(d.shippable) == 0 {
			return request{method: "POST", path: "/v1/shipments", auth: auth, body: []byte(`{"sales_order_id":"so_none"}`)}
		}
		l := d.shippable[r.IntN(len(d.shippable))]
		return request{method: "POST", path: "/v1/shipments", auth: auth,
			body: fmt.Appendf(nil, `{"sales_order_id":%q,"lines":[{"order_line_id":%q,"qty_milli":1}]}`, l.order, l.id)}
	}
	env.baseGen = getInvoice
	writeTarget := "≥ 5,000/s, p99 ≤ 30 ms"
	writeCheck := func(r result) bool { return r.rps >= 5000 && r.p99 <= 30 }
	probeOf := func(gen func(*rand.Rand) request) *request {
		r := gen(rand.New(rand.NewPCG(0, 0)))
		return &r
	}
	return append([]scenario{
		{name: baselineName, base: true, gen: getInvoice, ok: status(200)},
		{name: "read one invoice", gen: getInvoice, ok: status(200),
			target: "≥ 0.40×, p99 ≤ 5 ms", check: both(atLeast(0.40), p99Within(5))},
		// Right after the reads, before writes and bulk imports leave garbage
		// the Go heap has not yet returned: the RSS of serving 256 connections.
		{name: "read one invoice, 256 connections", conns: 256, gen: getInvoice, ok: status(200),
			target: "peak RSS ≤ 150 MB", check: func(r result) bool { return r.rss <= 150<<20 }},
		{name: "list invoices, limit 25, exact total", gen: listInvoices, ok: status(200),
			target: "≥ 0.10×, p99 ≤ 15 ms", check: both(atLeast(0.10), p99Within(15))},
		{name: "list invoices at offset " + strconv.FormatInt(deep, 10), ok: status(200),
			gen: func(r *rand.Rand) request {
				return get("/v1/invoices?limit=25&offset=" + strconv.FormatInt(deep+int64(r.IntN(40)*25), 10))
			},
			target: "p99 ≤ 50 ms", check: p99Within(50)},
		{name: "q search by invoice number", ok: status(200),
			gen:    func(r *rand.Rand) request { return get("/v1/invoices?q=" + d.invoice(r).number) },
			target: "p99 ≤ 20 ms", check: p99Within(20)},
		{name: "q search by client name", ok: status(200),
			gen:    func(r *rand.Rand) request { return get("/v1/invoices?q=" + url.QueryEscape(d.invoice(r).client)) },
			target: "p99 ≤ 20 ms", check: p99Within(20)},
		{name: "sales orders, status=confirmed", ok: status(200),
			gen: func(r *rand.Rand) request {
				return get("/v1/sales-orders?status=confirmed&offset=" + strconv.Itoa(r.IntN(20)*25))
			},
			target: "none in the issue"},
		{name: "sales orders, online=true", ok: status(200),
			gen: func(r *rand.Rand) request {
				return get("/v1/sales-orders?online=true&offset=" + strconv.Itoa(r.IntN(20)*25))
			},
			target: "none in the issue"},
		{name: "create client", gen: createClient, ok: status(201), probe: probeOf(createClient),
			target: writeTarget + "; events ≤ 15 %", check: both(writeCheck, eventCost)},
		{name: "record invoice payment", gen: payment, ok: status(200, 201), probe: probeOf(payment),
			target: writeTarget + "; events ≤ 15 %", check: both(writeCheck, eventCost)},
		{name: "create shipment (1/1000 of an order line)", gen: shipment, ok: status(201), probe: probeOf(shipment),
			target: "events ≤ 15 % (× against a -tags ledgerbase_noevents build ≥ 0.85)", check: eventCost},
		// One importer: the target is a bulk call's latency, and SQLite's one
		// writer would only queue 64 of them (p50 = 64 calls' time).
		{name: "bulk upsert 100 products with variants", conns: 1, gen: bulk, ok: status(200, 201, 207), probe: probeOf(bulk),
			target: "p50 ≤ 100 ms", check: func(r result) bool { return r.p50 <= 100 }},
		{name: "mix 90% reads / 10% create client", ok: status(200, 201), probe: probeOf(createClient),
			gen: func(r *rand.Rand) request {
				switch x := r.IntN(10); {
				case x == 0:
					return createClient(r)
				case x < 3:
					return listInvoices(r)
				default:
					return getInvoice(r)
				}
			}},
		dashboardScenario(env),
		{name: "429 to an over-limit key", ok: status(429),
			gen: func(r *rand.Rand) request {
				return request{method: "GET", path: "/v1/invoices/" + d.invoice(r).id, auth: env.limited}
			},
			target: "≥ 0.80×", check: atLeast(0.80)},
	}, documentScenarios(env)...)
}
