package writes

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	entgo "entgo.io/ent"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/numbering"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/item"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// Documents with lines (invoices, quotes, credit notes, bills) are written
// alike; docKind holds the little that differs.

type docKind struct {
	r       *resource.Resource
	party   string // "client" or "vendor"
	numbers numbering.Series
	// balance: the document keeps paid_cents and remaining_cents.
	balance bool
	// create and update are the kind's ent builders (build).
	create func(tx *ent.Tx) (entgo.Mutation, func(context.Context) error)
	update func(tx *ent.Tx, id string) (entgo.Mutation, func(context.Context) error)
	// fill, when set, completes a create's party (a credit note's from its invoice).
	fill func(q *Request, tx *ent.Tx, p *party) error
	// check, when set, vets the saved document after every create and edit.
	check func(q *Request, tx *ent.Tx, id string) error
}

var docKinds = map[*resource.Resource]*docKind{
	resource.Bills:       billKind,
	resource.CreditNotes: creditNoteKind,
	resource.Invoices:    invoiceKind,
	resource.Quotes:      quoteKind,
}

// builder is an ent create or update builder.
type builder[M entgo.Mutation] interface {
	Mutation() M
	Exec(context.Context) error
}

// build gives a docKind what it needs of a builder.
func build[M entgo.Mutation](b builder[M]) (entgo.Mutation, func(context.Context) error) {
	return b.Mutation(), b.Exec
}

// insert runs exec, the create of mutation m, and sets *id to the new
// record's id, which ent sets on the mutation before saving.
func insert(ctx context.Context, m entgo.Mutation, exec func(context.Context) error, id *string) error {
	if err := exec(ctx); err != nil {
		return err
	}
	*id = newID(m)
	return nil
}

func newID(m entgo.Mutation) string {
	id, _ := m.(interface{ ID() (string, bool) }).ID()
	return id
}

// docOwnFields are the body fields the operation sets itself.
var docOwnFields = []string{"lines", "number", "client_id", "client_name", "vendor_id", "vendor_name", "currency_code", "date", "external_ref"}

// checkItems refuses lines naming an item that is not the workspace's.
func (q *Request) checkItems(tx *ent.Tx, lines []shape.DocLine) error {
	var ids []string
	for _, l := range lines {
		if l.ItemID != nil && !slices.Contains(ids, *l.ItemID) {
			ids = append(ids, *l.ItemID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := tx.Item.Query().Where(item.IDIn(ids...), item.WorkspaceID(q.Workspace().ID)).IDs(q.Ctx)
	if err != nil {
		return err
	}
	for i, l := range lines {
		if l.ItemID != nil && !slices.Contains(found, *l.ItemID) {
			return apierr.Invalid(fmt.Sprintf("lines[%d].item_id", i), "no such item in this workspace")
		}
	}
	return nil
}

// party is a document's client or vendor as the body names it.
type party struct {
	id             *string
	name, currency string
}

// partyOf resolves the body's party: an id must be the workspace's, and
// gives the name and currency unless the body sets them.
func (q *Request) partyOf(tx *ent.Tx, kind string) (party, error) {
	var p party
	p.name, _ = q.Body.String(kind + "_name")
	p.currency, _ = q.Body.String("currency_code")
	id, ok := q.Body.String(kind + "_id")
	if !ok {
		return p, nil
	}
	table := map[string]string{"client": "clients", "vendor": "vendors"}[kind]
	var name, currency string
	err := queryRow(q, tx, "SELECT name, currency_code FROM "+table+" WHERE id = ? AND workspace_id = ?", []any{id, q.Workspace().ID}, &name, &currency)
	if err == sql.ErrNoRows {
		return p, apierr.Invalid(kind+"_id", "no such %s in this workspace", kind)
	} else if err != nil {
		return p, err
	}
	p.id = &id
	if p.name == "" {
		p.name = name
	}
	if p.currency == "" {
		p.currency = currency
	}
	return p, nil
}

// queryRow scans one row of a query run in tx; sql.ErrNoRows when none.
func queryRow(q *Request, tx *ent.Tx, query string, args []any, dest ...any) error {
	rows, err := tx.QueryContext(q.Ctx, q.DB.Rebind(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

// numberTaken reports whether another record of r in the workspace has number.
func (q *Request) numberTaken(tx *ent.Tx, r *resource.Resource, number, exceptID string) (bool, error) {
	var one int
	err := queryRow(q, tx, "SELECT 1 FROM "+r.Table+" WHERE workspace_id = ? AND number = ? AND id <> ?",
		[]any{q.Workspace().ID, number, exceptID}, &one)
	if isNoRows(err) {
		return false, nil
	}
	return err == nil, err
}

// numberFree refuses number when another record of r in the workspace has it.
func (q *Request) numberFree(tx *ent.Tx, r *resource.Resource, number, exceptID string) error {
	taken, err := q.numberTaken(tx, r, number, exceptID)
	if err == nil && taken {
		return duplicate("number", "the number %s is already used in this workspace", number)
	}
	return err
}

func isNoRows(err error) bool { return err == sql.ErrNoRows }

// docNumber is num, which must be free in the workspace, or when num is
// empty the next one of the kind's series.
func (q *Request) docNumber(tx *ent.Tx, r *resource.Resource, s numbering.Series, num string) (string, error) {
	if num != "" {
		// Taking turns with the series keeps concurrent creates of one number apart.
		if err := s.Claim(q.Ctx, q.DB, tx, q.Workspace().ID); err != nil {
			return "", err
		}
		return num, q.numberFree(tx, r, num, "")
	}
	nums, err := s.Allocate(q.Ctx, q.DB, tx, q.Workspace().ID, 1, func(batch []string) (map[string]bool, error) {
		used := map[string]bool{}
		for _, n := range batch {
			ok, err := q.numberTaken(tx, r, n, "")
			if err != nil {
				return nil, err
			}
			used[n] = ok
		}
		return used, nil
	})
	if err != nil {
		return "", err
	}
	return nums[0], nil
}

// setTotals stores the lines and their sums; a document with a balance
// owes all of it again (only drafts change lines, and drafts take no money).
func setTotals(m entgo.Mutation, k *docKind, lines []shape.DocLine, t money.Totals) error {
	set := map[string]any{"lines": lines, "amount_excl_vat_cents": t.ExclVATCents, "vat_amount_cents": t.VATCents, "amount_incl_vat_cents": t.InclVATCents}
	if k.balance {
		set["paid_cents"], set["remaining_cents"] = int64(0), t.InclVATCents
	}
	return setFields(m, set)
}

// setParty stores the party the body names.
func setParty(m entgo.Mutation, k *docKind, p party, clear bool) error {
	if clear {
		if err := m.ClearField(k.party + "_id"); err != nil {
			return internalf("clear %s_id: %w", k.party, err)
		}
	}
	set := map[string]any{}
	if p.id != nil && !clear {
		set[k.party+"_id"] = *p.id
	}
	if p.name != "" {
		set[k.party+"_name"] = p.name
	}
	if p.currency != "" {
		set["currency_code"] = p.currency
	}
	return setFields(m, set)
}

// createDocument makes a draft document of the request's kind.
func createDocument(q *Request) (Result, error) {
	k := docKinds[q.Resource]
	lines, tot, err := money.Lines(q.Body)
	if err != nil {
		return Result{}, err
	}
	ref, err := parseRef(q.Body)
	if err != nil {
		return Result{}, err
	}
	var id string
	isNew := true
	return q.inTx(func(tx *ent.Tx) error {
		isNew = true
		if ref != nil {
			// An external_ref the workspace knows: the POST edits that record.
			err := queryRow(q, tx, "SELECT id FROM "+k.r.Table+" WHERE workspace_id = ? AND ext_key = ?", []any{q.Workspace().ID, ref.key()}, &id)
			if err == nil {
				q.ID, isNew = id, false
				return q.editDocument(tx, k, lines, tot)
			}
			if !isNoRows(err) {
				return err
			}
		}
		p, err := q.partyOf(tx, k.party)
		if err != nil {
			return err
		}
		if k.fill != nil {
			if err := k.fill(q, tx, &p); err != nil {
				return err
			}
		}
		if p.id == nil && p.name == "" {
			return apierr.Invalid(k.party+"_id", "%s needs a %s: %s_id, or %s_name alone", article(q.Resource.Singular), k.party, k.party, k.party)
		}
		number, ok := q.Body.String("number")
		if ok && number == "" {
			return apierr.Invalid("number", "number cannot be empty; omit it to have one allocated")
		}
		date, _ := q.Body.String("date")
		id, err = q.insertDocument(tx, k, newDocument{party: p, number: number, date: date, lines: lines, totals: tot,
			set: func(m entgo.Mutation) error {
				if ref != nil {
					if err := setRefFields(m, ref); err != nil {
						return err
					}
				}
				return applyBody(m, q.Op.Body, q.Body, nil, docOwnFields...)
			}})
		return err
	}, func() Answer { return record(created(isNew), q.Resource, id, "") })
}

// newDocument is a draft to insert (from a create's body, or a quote's invoice).
type newDocument struct {
	party        party
	number, date string // "": the next number of the kind's series; today
	lines        []shape.DocLine
	totals       money.Totals
	// set sets the remaining columns (may be nil).
	set func(m entgo.Mutation) error
}

// insertDocument inserts a draft document of kind k in tx: items checked,
// number allocated, lines and totals stored, then the kind's check.
func (q *Request) insertDocument(tx *ent.Tx, k *docKind, d newDocument) (string, error) {
	if d.party.currency == "" {
		d.party.currency = "EUR"
	}
	if err := q.checkItems(tx, d.lines); err != nil {
		return "", err
	}
	number, err := q.docNumber(tx, k.r, k.numbers, d.number)
	if err != nil {
		return "", err
	}
	if d.date == "" {
		d.date = today()
	}
	m, save := k.create(tx)
	if err := setFields(m, map[string]any{"workspace_id": q.Workspace().ID, "number": number, "date": d.date}); err != nil {
		return "", err
	}
	if err := setParty(m, k, d.party, false); err != nil {
		return "", err
	}
	if err := setTotals(m, k, d.lines, d.totals); err != nil {
		return "", err
	}
	if d.set != nil {
		if err := d.set(m); err != nil {
			return "", err
		}
	}
	if err := save(q.Ctx); err != nil {
		return "", err
	}
	id := newID(m)
	if k.check != nil {
		if err := k.check(q, tx, id); err != nil {
			return "", err
		}
	}
	return id, nil
}

// updateDocument edits a document: anything while it is a draft (lines
// are replaced whole), only notes and due_date afterwards, nothing once void.
func updateDocument(q *Request) (Result, error) {
	k := docKinds[q.Resource]
	var lines []shape.DocLine
	var tot money.Totals
	if q.Body.Has("lines") {
		var err error
		if lines, tot, err = money.Lines(q.Body); err != nil {
			return Result{}, err
		}
	}
	return q.inTx(func(tx *ent.Tx) error { return q.editDocument(tx, k, lines, tot) },
		func() Answer { return record(http.StatusOK, q.Resource, q.ID, "") })
}

// editDocument applies the body to document q.ID by the edit rules; lines
// and tot are the body's lines, priced.
func (q *Request) editDocument(tx *ent.Tx, k *docKind, lines []shape.DocLine, tot money.Totals) error {
	st, err := q.state(tx)
	if err != nil {
		return err
	}
	if st != "draft" {
		// The declared edit's states (all but void): the admin UI's rule too.
		if err := q.checkEdit(st); err != nil {
			return err
		}
		if err := q.lateOnly(st); err != nil {
			return err
		}
	}
	m, save := k.update(tx, q.ID)
	if q.Body.Has("external_ref") {
		ref, err := parseRef(q.Body)
		if err != nil {
			return err
		}
		var other string
		err = queryRow(q, tx, "SELECT id FROM "+k.r.Table+" WHERE workspace_id = ? AND ext_key = ? AND id <> ?", []any{q.Workspace().ID, ref.key(), q.ID}, &other)
		if err == nil {
			return duplicate("external_ref", "another %s already has this external_ref", q.Resource.Singular)
		} else if !isNoRows(err) {
			return err
		}
		if err := setRefFields(m, ref); err != nil {
			return err
		}
	}
	if q.Body.Has(k.party+"_id") || q.Body.Has(k.party+"_name") || q.Body.Has("currency_code") {
		p, err := q.partyOf(tx, k.party)
		if err != nil {
			return err
		}
		if err := setParty(m, k, p, q.Body.IsNull(k.party+"_id")); err != nil {
			return err
		}
	}
	if q.Body.Has("lines") {
		if err := q.checkItems(tx, lines); err != nil {
			return err
		}
		if err := setTotals(m, k, lines, tot); err != nil {
			return err
		}
	}
	set := map[string]any{}
	if num, ok := q.Body.String("number"); ok {
		if err := q.numberFree(tx, q.Resource, num, q.ID); err != nil {
			return err
		}
		set["number"] = num
	}
	if date, ok := q.Body.String("date"); ok {
		set["date"] = date
	}
	if err := setFields(m, set); err != nil {
		return err
	}
	if err := applyBody(m, q.Op.Body, q.Body, nil, docOwnFields...); err != nil {
		return err
	}
	if err := save(q.Ctx); err != nil {
		return err
	}
	if k.check != nil {
		return k.check(q, tx, q.ID)
	}
	return nil
}

// article is "an invoice", "a quote".
func article(noun string) string {
	if len(noun) > 0 && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// amountText is minor units of currency as a person reads them, for the
// API's messages (which are in English): "€248.28", "¥1,200".
func amountText(minor int64, currency string) string { return money.Format(minor, currency, "en") }

// qtyText is a quantity in thousandths as a person reads it: "1.5".
func qtyText(milli int64) string { return money.Decimal(milli, 3, "en") }

// lateOnly refuses a body that changes more than a document in state st
// (not a draft) may still change (resource.LateFields), naming the field.
func (q *Request) lateOnly(st string) error {
	late := resource.LateFields(q.Resource)
	for _, name := range slices.Sorted(maps.Keys(q.Body.Map())) {
		if !slices.Contains(late, name) {
			// The fields this resource's body has, as the message names them.
			shown := slices.DeleteFunc(slices.Clone(late), func(f string) bool {
				return !slices.ContainsFunc(q.Op.Body, func(b resource.Field) bool { return b.Name == f })
			})
			e := stateConflict("%s %s can only change %s; %s changes only while it is a draft",
				article(humanState(st)), q.Resource.Singular, inWords(shown), name)
			e.Param = name
			return e
		}
	}
	return nil
}

// inWords lists names as a sentence does: "a, b and c".
func inWords(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
