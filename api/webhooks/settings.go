// Package webhooks pushes a workspace's events to its endpoints, signed per
// Standard Webhooks and kept off private networks.
package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Resolver looks a host's addresses up (net.DefaultResolver; tests inject theirs).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Settings are the webhooks' configuration (webhooks.* in serve's config).
type Settings struct {
	// AllowHTTP accepts http:// URLs (else https only).
	AllowHTTP bool
	// AllowPrivateNetworks accepts URLs resolving to any address, not only
	// globally routable ones: for tests and private deployments.
	AllowPrivateNetworks bool
	// Resolver and Dial reach the receivers; nil is the system's.
	Resolver Resolver
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	// Schedule is the delay before each retry; after the last one the
	// delivery has failed.
	Schedule []time.Duration
	// Timeout is how long a receiver has to answer 2xx.
	Timeout time.Duration
	// LeaseMargin is how long a claim holds a delivery beyond Timeout: room
	// to record the attempt, and for servers' clocks to disagree.
	LeaseMargin time.Duration
	// DisableAfter disables an endpoint that has failed this long without a success.
	DisableAfter time.Duration
	// Poll is how often the worker looks for due deliveries when nothing woke it.
	Poll   time.Duration
	Logger *slog.Logger
}

// DefaultSchedule retries for about three days (Standard Webhooks' example
// schedule, then every 10 h): 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// withDefaults fills what s leaves zero.
func (s Settings) withDefaults() Settings {
	if s.Resolver == nil {
		s.Resolver = net.DefaultResolver
	}
	if s.Dial == nil {
		s.Dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	if len(s.Schedule) == 0 {
		s.Schedule = DefaultSchedule
	}
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	if s.LeaseMargin <= 0 {
		s.LeaseMargin = 20 * time.Second
	}
	if s.DisableAfter <= 0 {
		s.DisableAfter = 72 * time.Hour
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s
}

// ParseSchedule reads a comma list of durations ("5s,5m,30m").
func ParseSchedule(v string) ([]time.Duration, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, p := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("webhooks.retry_schedule: %q is not a duration", p)
		}
		out = append(out, d)
	}
	return out, nil
}
