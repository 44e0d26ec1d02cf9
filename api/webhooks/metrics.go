package webhooks

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Outcomes of an attempt, the values of the outcome label.
const (
	OutcomeSuccess = "success" // the receiver answered 2xx in time
	OutcomeRetry   = "retry"   // it did not; another attempt is scheduled
	OutcomeFailed  = "failed"  // failed for good: the schedule is spent, or the endpoint is gone or disabled
	OutcomeRefused = "refused" // the guard refused the address at send time; nothing was dialed
)

// Metrics are the delivery metrics: attempts by outcome and their latency,
// counted by this process; the queue's depth and age, read from the
// database at scrape time, so every process reports the same queue.
type Metrics struct {
	db       *database.DB
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
	depth    *prometheus.Desc
	oldest   *prometheus.Desc
}

// NewMetrics builds the metrics of db's delivery queue; register them
// with a prometheus.Registerer and give them to the workers.
func NewMetrics(db *database.DB) *Metrics {
	m := &Metrics{
		db: db,
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerbase_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: success (2xx), retry (failed, retried later), failed (for good: last attempt, or endpoint gone or disabled), refused (private address at send time).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ledgerbase_webhook_attempt_duration_seconds",
			Help:    "Time from sending a webhook to its receiver's answer (or the error), by attempt.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		depth: prometheus.NewDesc("ledgerbase_webhook_deliveries_pending",
			"Webhook deliveries not yet succeeded or failed for good (due now or waiting for a retry), in the whole database.", nil, nil),
		oldest: prometheus.NewDesc("ledgerbase_webhook_oldest_pending_age_seconds",
			"Age of the oldest pending webhook delivery (0 when none), in the whole database.", nil, nil),
	}
	// Pre-declared so a rate() over each works before its first attempt.
	for _, o := range []string{OutcomeSuccess, OutcomeRetry, OutcomeFailed, OutcomeRefused} {
		m.outcomes.WithLabelValues(o)
	}
	return m
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.outcomes.Describe(ch)
	m.latency.Describe(ch)
	ch <- m.depth
	ch <- m.oldest
}

// Collect implements prometheus.Collector: one query for the queue.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.outcomes.Collect(ch)
	m.latency.Collect(ch)
	n, oldest, err := m.queue()
	if err != nil {
		// Left out, not an error: one would fail the whole scrape, and the
		// other metrics matter most when the database does not answer.
		return
	}
	age := 0.0
	if n > 0 {
		age = max(time.Since(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(m.depth, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(m.oldest, prometheus.GaugeValue, age)
}

// queue counts the pending deliveries and finds the oldest one's creation,
// through the (status, next_attempt_at) index.
func (m *Metrics) queue() (int64, time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int64
	if err := m.db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").Scan(&n); err != nil || n == 0 {
		return n, time.Time{}, err
	}
	// MIN over a time column comes back as text on SQLite: order and take one.
	var oldest time.Time
	err := m.db.ReadPool.QueryRowContext(ctx,
		"SELECT created_at FROM webhook_deliveries WHERE status = 'pending' ORDER BY created_at LIMIT 1").Scan(&oldest)
	return n, oldest, err
}

// attempt counts one attempt's outcome and latency; nil counts nothing.
func (m *Metrics) attempt(outcome string, latency time.Duration) {
	if m == nil {
		return
	}
	m.outcomes.WithLabelValues(outcome).Inc()
	m.latency.Observe(latency.Seconds())
}

// dropped counts deliveries failed without an attempt.
func (m *Metrics) dropped(n int) {
	if m == nil || n == 0 {
		return
	}
	m.outcomes.WithLabelValues(OutcomeFailed).Add(float64(n))
}
