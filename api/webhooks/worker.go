package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/database"
	"github.com/ledgerbase/ledgerbase/ent/webhookdelivery"
	"github.com/ledgerbase/ledgerbase/ent/webhookendpoint"
)

// Worker sends due deliveries; any number of workers may share a database.
// A claim moves next_attempt_at past the send's deadline in its own short
// transaction, so two workers never hold the same delivery, and one that
// dies mid-send leaves a claim that runs out and is taken again.
type Worker struct {
	db     *database.DB
	s      Settings
	client *http.Client
	// Batch is how many deliveries one claim takes.
	Batch int
	// Metrics, when set, count the attempts.
	Metrics *Metrics
	// Queues are the other durable queues this loop serves after the
	// deliveries, woken by the same Wake and polled as often (the email
	// outbox, api/mail).
	Queues []Queue
}

// Queue is a durable queue the worker's loop serves: RunOnce claims what
// is due (up to a batch), sends it and records the outcome, and says how
// many it claimed; a claim must survive the process (a lease in the
// database), as the deliveries' does.
type Queue interface {
	RunOnce(ctx context.Context) (int, error)
	Batch() int
}

// NewWorker builds a worker on db.
func NewWorker(db *database.DB, s Settings) *Worker {
	s = s.withDefaults()
	tr := &http.Transport{
		DialContext:           s.dial, // resolves and checks every address it dials
		Proxy:                 nil,    // a proxy would dial for us, past the guard
		TLSHandshakeTimeout:   s.Timeout,
		ResponseHeaderTimeout: s.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Worker{db: db, s: s, Batch: 100, client: &http.Client{
		Transport: tr,
		Timeout:   s.Timeout,
		// A redirect is an answer, not an instruction: following it would
		// let a receiver point the server anywhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// lease is how long a claim holds a delivery: past the send's deadline.
func (w *Worker) lease() time.Duration { return w.s.Timeout + w.s.LeaseMargin }

// Run sends deliveries until ctx ends; a send in flight then is cut off
// unrecorded and its claim runs out, so another run sends it again.
func (w *Worker) Run(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.s.Logger.Warn("webhooks: delivery round failed", "err", err)
		}
		more := n >= w.Batch && err == nil
		for _, q := range w.Queues {
			n, err := q.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				w.s.Logger.Warn("worker: a queue's round failed", "queue", fmt.Sprintf("%T", q), "err", err)
			}
			more = more || n >= q.Batch() && err == nil
		}
		if more {
			continue // more are due
		}
		t := time.NewTimer(w.s.Poll)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// RunOnce claims the due deliveries (up to Batch), sends them and records
// the attempts; it returns how many it claimed.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := time.Now().UTC()
	// Idle servers look on the read pool first: claiming takes the writer.
	due, err := w.db.Reader.WebhookDelivery.Query().
		Where(webhookdelivery.StatusEQ(webhookdelivery.StatusPending), webhookdelivery.NextAttemptAtLTE(now)).Exist(ctx)
	if err != nil || !due {
		return 0, err
	}
	// Waits, boundedly, for the writes running now, so their deliveries
	// go in this round.
	settled, err := w.db.SettledSeq(ctx, "", time.Second)
	if err != nil {
		return 0, err
	}
	ds, err := w.claim(ctx, now, settled)
	if err != nil || len(ds) == 0 {
		return 0, err
	}
	jobs, err := w.load(ctx, ds)
	if err != nil {
		return len(ds), err
	}
	// An endpoint's deliveries go one after another, in commit order;
	// endpoints go side by side.
	byEndpoint := map[string][]*job{}
	var order []string
	for _, j := range jobs {
		if _, ok := byEndpoint[j.d.EndpointID]; !ok {
			order = append(order, j.d.EndpointID)
		}
		byEndpoint[j.d.EndpointID] = append(byEndpoint[j.d.EndpointID], j)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(order))
	for i, ep := range order {
		wg.Go(func() {
			// Successes are recorded together, before anything else is
			// recorded and at the end: one transaction for a run of them.
			// Unrecorded, they would only be sent again, in order.
			var sent []done
			flush := func() {
				if err := w.recordSent(context.WithoutCancel(ctx), sent); err != nil {
					errs[i] = errors.Join(errs[i], err)
				}
				sent = sent[:0]
			}
			defer flush()
			for k, j := range byEndpoint[ep] {
				// Behind a slow receiver the claim would run out before the
				// last were sent (and another worker would send them too):
				// those the lease cannot cover go back to the queue.
				if time.Until(now.Add(w.lease())) < w.s.Timeout+w.s.LeaseMargin/2 {
					flush()
					errs[i] = errors.Join(errs[i], w.release(ctx, byEndpoint[ep][k:]))
					return
				}
				res := w.send(ctx, j)
				if ctx.Err() != nil {
					return // cut off: unrecorded, the claim runs out
				}
				if res.ok() {
					sent = append(sent, done{j, res})
					continue
				}
				flush()
				if err := w.record(ctx, j, res); err != nil {
					errs[i] = errors.Join(errs[i], err)
				}
			}
		})
	}
	wg.Wait()
	return len(ds), errors.Join(errs...)
}

// claim takes the due deliveries for one lease, those of events numbered
// below settled.
func (w *Worker) claim(ctx context.Context, now time.Time, settled int64) ([]*ent.WebhookDelivery, error) {
	tx, err := w.db.Writer.Tx(ctx)
	if err != nil {
		return nil, err
	}
	q := tx.WebhookDelivery.Query().
		Where(webhookdelivery.StatusEQ(webhookdelivery.StatusPending), webhookdelivery.NextAttemptAtLTE(now)).
		Limit(w.Batch)
	if w.db.Dialect != dialect.Postgres {
		q = q.Order(ent.Asc(webhookdelivery.FieldNextAttemptAt), ent.Asc(webhookdelivery.FieldEventSeq), ent.Asc(webhookdelivery.FieldID))
	} else {
		// Only settled events' deliveries, in seq order: seq follows the
		// writing transactions' ids, not their commits, so a delivery goes
		// out only once every event before it has committed or never will,
		// and its delivery is among those claimed before or with it.
		q = q.Where(webhookdelivery.EventSeqLT(settled)).
			Order(ent.Asc(webhookdelivery.FieldEventSeq), ent.Asc(webhookdelivery.FieldID)).
			ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
	}
	ds, err := q.All(ctx)
	if err == nil && len(ds) > 0 {
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.ID
		}
		err = tx.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...)).
			SetNextAttemptAt(now.Add(w.lease())).Exec(ctx)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return ds, tx.Commit()
}

// release hands claimed deliveries back, due now.
func (w *Worker) release(ctx context.Context, js []*job) error {
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.d.ID
	}
	return w.db.Writer.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...), webhookdelivery.StatusEQ(webhookdelivery.StatusPending)).
		SetNextAttemptAt(time.Now().UTC()).Exec(ctx)
}

// job is a claimed delivery with what sending it needs.
type job struct {
	d    *ent.WebhookDelivery
	ep   *ent.WebhookEndpoint
	body []byte
}

// load reads the claimed deliveries' endpoints and events; a delivery
// whose endpoint is gone or disabled has failed without an attempt.
func (w *Worker) load(ctx context.Context, ds []*ent.WebhookDelivery) ([]*job, error) {
	epIDs := map[string]bool{}
	evIDs := map[string]bool{}
	for _, d := range ds {
		epIDs[d.EndpointID], evIDs[d.EventID] = true, true
	}
	eps, err := w.db.Reader.WebhookEndpoint.Query().Where(webhookendpoint.IDIn(slices.Collect(maps.Keys(epIDs))...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]*ent.WebhookEndpoint{}
	for _, ep := range eps {
		byID[ep.ID] = ep
	}
	ids := slices.Collect(maps.Keys(evIDs))
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rs, err := w.db.ReadPool.QueryContext(ctx, w.db.Rebind("SELECT "+EventColumns+" FROM events WHERE id IN ("+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+")"), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	bodies := map[string][]byte{}
	for rs.Next() {
		e, _, err := ScanEvent(rs)
		if err != nil {
			return nil, err
		}
		if bodies[e.ID], err = json.Marshal(e); err != nil {
			return nil, err
		}
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	var out []*job
	var dropped []string
	for _, d := range ds {
		ep, body := byID[d.EndpointID], bodies[d.EventID]
		if ep == nil || ep.Disabled || body == nil {
			dropped = append(dropped, d.ID)
			continue
		}
		out = append(out, &job{d: d, ep: ep, body: body})
	}
	if len(dropped) > 0 {
		err = w.db.Writer.WebhookDelivery.Update().Where(webhookdelivery.IDIn(dropped...)).
			SetStatus(webhookdelivery.StatusFailed).Exec(ctx)
		if err == nil {
			w.Metrics.dropped(len(dropped))
		}
	}
	return out, err
}

// result is one attempt's outcome.
type result struct {
	at       time.Time
	status   int
	latency  time.Duration
	err      string
	response string
	refused  bool // the guard refused the address: nothing was dialed
}

func (r result) ok() bool { return r.err == "" && r.status >= 200 && r.status < 300 }

// send makes one attempt.
func (w *Worker) send(ctx context.Context, j *job) result {
	res := result{at: time.Now().UTC()}
	ctx, cancel := context.WithTimeout(ctx, w.s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.ep.URL, bytes.NewReader(j.body))
	if err != nil {
		res.err = err.Error()
		return res
	}
	ts := res.at.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Ledgerbase-Webhooks/1")
	req.Header.Set("webhook-id", j.d.EventID) // the event's: stable across retries, a receiver's dedupe key
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", Sign(secrets(j.ep, res.at), j.d.EventID, ts, j.body))
	resp, err := w.client.Do(req)
	res.latency = time.Since(res.at)
	if err != nil {
		res.err = clean(err.Error())
		var refused *RefusedError
		res.refused = errors.As(err, &refused)
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	res.response = clean(string(b))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		res.err = "redirects are not followed"
	}
	return res
}

// clean makes text storable on both databases (UTF-8, no NUL).
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// secrets are the endpoint's signing secrets at t: the current one, and a
// rotated-out one until it expires.
func secrets(ep *ent.WebhookEndpoint, t time.Time) []string {
	out := []string{ep.Secret}
	if ep.PreviousSecret != "" && ep.PreviousSecretExpiresAt != nil && t.Before(*ep.PreviousSecretExpiresAt) {
		out = append(out, ep.PreviousSecret)
	}
	return out
}

// done is a delivery the receiver took.
type done struct {
	j *job
	r result
}

// recordSent logs the attempts of deliveries of one endpoint that
// succeeded, in one transaction: each done, its endpoint no longer failing.
func (w *Worker) recordSent(ctx context.Context, sent []done) error {
	if len(sent) == 0 {
		return nil
	}
	tx, err := w.db.Writer.Tx(ctx)
	if err != nil {
		return err
	}
	attempts := make([]*ent.WebhookAttemptCreate, len(sent))
	ids := make([]string, len(sent))
	for i, s := range sent {
		attempts[i], ids[i] = attempt(tx, s.j.d, s.r), s.j.d.ID
	}
	err = tx.WebhookAttempt.CreateBulk(attempts...).Exec(ctx)
	if err == nil {
		err = tx.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...)).AddAttempts(1).
			SetStatus(webhookdelivery.StatusSucceeded).Exec(ctx)
	}
	if err == nil {
		err = tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(sent[0].j.ep.ID), webhookendpoint.FailingSinceNotNil()).
			ClearFailingSince().Exec(ctx)
	}
	if err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, s := range sent {
		w.Metrics.attempt(OutcomeSuccess, s.r.latency)
	}
	return nil
}

// attempt is the row that logs r, an attempt to deliver d.
func attempt(tx *ent.Tx, d *ent.WebhookDelivery, r result) *ent.WebhookAttemptCreate {
	return tx.WebhookAttempt.Create().SetWorkspaceID(d.WorkspaceID).SetDeliveryID(d.ID).SetCreatedAt(r.at).
		SetStatusCode(r.status).SetLatencyMs(r.latency.Milliseconds()).SetError(r.err).SetResponse(r.response)
}

// record logs a failed attempt (successes go to recordSent) and schedules
// what follows: a retry after the schedule's next delay with jitter, or
// failed after the last one; an endpoint failing for DisableAfter is
// disabled, and says why.
func (w *Worker) record(ctx context.Context, j *job, r result) error {
	tx, err := w.db.Writer.Tx(ctx)
	if err != nil {
		return err
	}
	outcome, err := w.recordTx(ctx, tx, j, r)
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if r.refused {
		outcome = OutcomeRefused
	}
	w.Metrics.attempt(outcome, r.latency)
	return nil
}

// recordTx writes the failed attempt and what follows; it returns the
// outcome.
func (w *Worker) recordTx(ctx context.Context, tx *ent.Tx, j *job, r result) (string, error) {
	d, ep := j.d, j.ep
	if err := attempt(tx, d, r).Exec(ctx); err != nil {
		return "", err
	}
	attempts := d.Attempts + 1
	up := tx.WebhookDelivery.UpdateOneID(d.ID).SetAttempts(attempts)
	outcome := OutcomeRetry
	if attempts > len(w.s.Schedule) {
		outcome = OutcomeFailed
		up.SetStatus(webhookdelivery.StatusFailed)
	} else {
		delay := w.s.Schedule[attempts-1]
		delay += time.Duration(rand.Int64N(int64(delay)/5 + 1)) // jitter: retries of many deliveries spread out
		up.SetNextAttemptAt(time.Now().UTC().Add(delay))
	}
	if err := up.Exec(ctx); err != nil {
		return "", err
	}
	cur, err := tx.WebhookEndpoint.Get(ctx, ep.ID)
	if err != nil {
		return outcome, ent.MaskNotFound(err)
	}
	switch {
	case cur.FailingSince == nil:
		return outcome, tx.WebhookEndpoint.UpdateOneID(ep.ID).SetFailingSince(r.at).Exec(ctx)
	case !cur.Disabled && r.at.Sub(*cur.FailingSince) >= w.s.DisableAfter:
		why := r.err
		if why == "" {
			why = "answered " + strconv.Itoa(r.status)
		}
		reason := fmt.Sprintf("every delivery failed since %s (last: %s)", cur.FailingSince.UTC().Format(time.RFC3339), why)
		w.s.Logger.Warn("webhooks: endpoint disabled", "endpoint", ep.ID, "workspace", d.WorkspaceID, "reason", reason)
		return outcome, tx.WebhookEndpoint.UpdateOneID(ep.ID).SetDisabled(true).SetDisabledReason(reason).Exec(ctx)
	}
	return outcome, nil
}
