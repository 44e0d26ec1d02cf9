package mail

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// Outcomes of an attempt, the values of the outcome label.
const (
	OutcomeSent          = "sent"           // the SMTP server accepted the message
	OutcomeRetry         = "retry"          // it did not (or the PDF could not be made); another attempt is scheduled
	OutcomeFailed        = "failed"         // failed for good: the schedule is spent
	OutcomeNotConfigured = "not_configured" // no attempt: SMTP is not configured; the message waits
)

// Metrics are the outbox's metrics: attempts by outcome and their
// duration, counted by this process; the messages owed an attempt, read
// from the database at scrape time, so every process reports the same.
type Metrics struct {
	db       *database.DB
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
	pending  *prometheus.Desc
}

// NewMetrics builds the metrics of db's outbox; register them with a
// prometheus.Registerer and give them to the outbox.
func NewMetrics(db *database.DB) *Metrics {
	m := &Metrics{
		db: db,
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerbase_emails_total",
			Help: "Email attempts by outcome: sent (the SMTP server accepted it), retry (failed, retried later), failed (for good: last attempt), not_configured (no SMTP: waits).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ledgerbase_email_attempt_duration_seconds",
			Help:    "Time of one email attempt: rendering the PDF and the SMTP conversation.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		pending: prometheus.NewDesc("ledgerbase_emails_pending",
			"Emails owed an attempt (new, waiting for a retry, or waiting for SMTP to be configured), in the whole database.", nil, nil),
	}
	for _, o := range []string{OutcomeSent, OutcomeRetry, OutcomeFailed, OutcomeNotConfigured} {
		m.outcomes.WithLabelValues(o)
	}
	return m
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.outcomes.Describe(ch)
	m.latency.Describe(ch)
	ch <- m.pending
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.outcomes.Collect(ch)
	m.latency.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int64
	if err := m.db.ReadPool.QueryRowContext(ctx, "SELECT COUNT(*) FROM email_messages WHERE next_attempt_at IS NOT NULL").Scan(&n); err != nil {
		return // left out, not an error: one would fail the whole scrape
	}
	ch <- prometheus.MustNewConstMetric(m.pending, prometheus.GaugeValue, float64(n))
}

// attempt counts one attempt's outcome and duration; nil counts nothing.
func (m *Metrics) attempt(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.outcomes.WithLabelValues(outcome).Inc()
	m.latency.Observe(took.Seconds())
}

// outcome counts n messages of an outcome without an attempt.
func (m *Metrics) outcome(outcome string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.outcomes.WithLabelValues(outcome).Add(float64(n))
}
