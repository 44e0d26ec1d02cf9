// Package demo fills a workspace with realistic, internally consistent
// records: the data behind `serve --demo`, `ledgerbase demo` and benchmarks.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// Options scales the data: Invoices records of invoices, the rest in proportion.
type Options struct {
	Invoices int
	Seed     uint64
}

// Seed fills workspace wsID.
func Seed(ctx context.Context, db *database.DB, wsID string, o Options) error {
	if o.Invoices <= 0 {
		o.Invoices = 50
	}
	rng := rand.New(rand.NewPCG(o.Seed, 42))
	clients := max(5, o.Invoices/10)
	now := time.Now().UTC()
	cl := make([]*ent.CustomerCreate, clients)
	names := make([]string, clients)
	cids := make([]string, clients)
	for i := range cl {
		at := now.Add(-time.Duration(clients-i) * time.Hour)
		names[i] = fmt.Sprintf("%s %s", companyA[rng.IntN(len(companyA))], companyB[rng.IntN(len(companyB))])
		cids[i] = ids.At("cli", at)
		cl[i] = db.Ent.Customer.Create().SetID(cids[i]).SetWorkspaceID(wsID).SetName(names[i]).
			SetEmail(fmt.Sprintf("billing%d@example.com", i)).SetCreatedAt(at).SetUpdatedAt(at)
	}
	for len(cl) > 0 {
		n := min(len(cl), 500)
		if err := db.Ent.Customer.CreateBulk(cl[:n]...).Exec(ctx); err != nil {
			return err
		}
		cl = cl[n:]
	}
	inv := make([]*ent.InvoiceCreate, 0, 500)
	for i := 0; i < o.Invoices; i++ {
		at := now.Add(-time.Duration(o.Invoices-i) * time.Minute)
		c := rng.IntN(clients)
		qty := int64(1+rng.IntN(5)) * 1000
		price := int64(1000 + rng.IntN(50000))
		excl := qty * price / 1000
		vat := excl * 20 / 100
		status := invoice.StatusSent
		if rng.IntN(3) == 0 {
			status = invoice.StatusDraft
		}
		inv = append(inv, db.Ent.Invoice.Create().SetID(ids.At("inv", at)).SetWorkspaceID(wsID).
			SetNumber(fmt.Sprintf("INV-%06d", i+1)).SetDate(at.Format("2006-01-02")).SetStatus(status).
			SetClientID(cids[c]).SetClientName(names[c]).
			SetLines([]shape.DocLine{{Description: "Consulting", QtyMilli: qty, UnitPriceCents: price, VATRateBasisPoints: 2000,
				AmountExclVATCents: excl, VATAmountCents: vat, AmountInclVATCents: excl + vat}}).
			SetAmountExclVatCents(excl).SetVatAmountCents(vat).SetAmountInclVatCents(excl+vat).
			SetRemainingCents(excl+vat).SetCreatedAt(at).SetUpdatedAt(at))
		if len(inv) == cap(inv) || i == o.Invoices-1 {
			if err := db.Ent.Invoice.CreateBulk(inv...).Exec(ctx); err != nil {
				return err
			}
			inv = inv[:0]
		}
	}
	return nil
}

var companyA = []string{"Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay", "Soylent", "Tyrell"}
var companyB = []string{"Industries", "Corporation", "Holdings", "Trading", "Logistics", "Labs", "Foods", "Partners"}
