package writes

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/giftcard"
	"github.com/ledgerbase/ledgerbase/ent/ids"
	"github.com/ledgerbase/ledgerbase/ent/shape"
)

// GiftCodeLen is the length of a generated gift card code: 20 characters
// of base32 (A–Z, 2–7) are 100 random bits, 80 of them unknown to someone
// who sees the last four.
const GiftCodeLen = 20

// GiftCodeHash is what a code is stored as: the SHA-256 of the code in
// capitals without spaces or dashes, in hex (as the demo's cards).
func GiftCodeHash(code string) string {
	sum := sha256.Sum256([]byte(normalGiftCode(code)))
	return hex.EncodeToString(sum[:])
}

func normalGiftCode(code string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
}

// newGiftCode is a fresh random code, grouped by four for reading aloud:
// ABCD-EFGH-JKLM-NPQR-STUV.
func newGiftCode() string {
	raw := rand.Text()[:GiftCodeLen]
	var b strings.Builder
	for i := 0; i < len(raw); i += 4 {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(raw[i : i+4])
	}
	return b.String()
}

// issueGiftCard makes an active card with its starting balance as the
// ledger's first entry. The code is kept only as its hash and last four
// characters, and handed back once as the Result's Secret.
func issueGiftCard(q *Request) (Result, error) {
	v, ws := q.Body, q.Workspace().ID
	initial, _ := v.Int("initial_balance_cents")
	var expires *time.Time
	if s, ok := v.String("expires_at"); ok {
		t, _ := time.Parse(time.RFC3339, s)
		if !t.After(time.Now()) {
			return Result{}, apierr.Invalid("expires_at", "expires_at must be in the future")
		}
		t = t.UTC()
		expires = &t
	}
	var id, code string
	res, err := q.inTx(func(tx *ent.Tx) error {
		if _, err := q.partyOf(tx, "client"); err != nil { // a client_id of the workspace
			return err
		}
		// Drawn in the transaction: a rerun after a (vanishingly unlikely)
		// clash on the unique hash draws again.
		code = newGiftCode()
		now := time.Now().UTC()
		c := tx.GiftCard.Create().SetWorkspaceID(ws).
			SetCodeHash(GiftCodeHash(code)).SetCodeLast4(code[len(code)-4:]).
			SetInitialBalanceCents(initial).SetBalanceCents(initial).SetNillableExpiresAt(expires).
			SetLedger([]shape.LedgerEntry{{ID: ids.New("gcl"), At: now.Format(time.RFC3339), Kind: "issue",
				AmountCents: initial, BalanceAfterCents: initial}})
		if cur, ok := v.String("currency_code"); ok {
			c.SetCurrencyCode(cur)
		}
		if cl, ok := v.String("client_id"); ok {
			c.SetClientID(cl)
		}
		return insert(q.Ctx, c.Mutation(), c.Exec, &id)
	}, func() Answer { return record(http.StatusCreated, resource.GiftCards, id, "") })
	if err != nil {
		return Result{}, err
	}
	res.Secret = code
	return res, nil
}

// adjustGiftCard adds amount_cents (negative: takes it off) to a card's
// balance, with its reason in the ledger; at zero the card is depleted,
// above it active.
func adjustGiftCard(q *Request) (Result, error) {
	amount, _ := q.Body.Int("amount_cents")
	reason, _ := q.Body.String("reason")
	if amount == 0 {
		return Result{}, apierr.Invalid("amount_cents", "amount_cents must not be zero: positive adds to the balance, negative takes off")
	}
	return q.inTx(func(tx *ent.Tx) error {
		if _, err := q.allowed(tx); err != nil { // locks the card's row
			return err
		}
		g, err := tx.GiftCard.Query().Where(giftcard.ID(q.ID), giftcard.WorkspaceID(q.Workspace().ID)).Only(q.Ctx)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		if g.ExpiresAt != nil && !g.ExpiresAt.After(now) {
			return stateConflict("the gift card expired on %s; its balance cannot change", g.ExpiresAt.UTC().Format(time.RFC3339))
		}
		if amount > 0 && g.BalanceCents > math.MaxInt64-amount {
			return apierr.Invalid("amount_cents", "amount_cents is too large: the balance would not fit in 64 bits")
		}
		after := g.BalanceCents + amount
		if after < 0 {
			e := apierr.Conflict("amount_exceeds_balance", "the balance is %s; at most %s can be taken off",
				amountText(g.BalanceCents, g.CurrencyCode), amountText(g.BalanceCents, g.CurrencyCode))
			e.Param = "amount_cents"
			return e
		}
		status := giftcard.StatusActive
		if after == 0 {
			status = giftcard.StatusDepleted
		}
		ledger := append(g.Ledger, shape.LedgerEntry{ID: ids.New("gcl"), At: now.Format(time.RFC3339), Kind: "adjust",
			AmountCents: amount, BalanceAfterCents: after, Reason: strings.TrimSpace(reason)})
		return tx.GiftCard.UpdateOneID(g.ID).SetBalanceCents(after).SetStatus(status).SetLedger(ledger).Exec(q.Ctx)
	}, func() Answer { return record(http.StatusOK, resource.GiftCards, q.ID, "") })
}
