package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/apierr"
)

// Server-side request forgery: a webhook URL is the one place a user makes
// the server send requests, so it must not reach what the server can reach
// and the user cannot (the cloud metadata service, the database, the LAN).
// Checked at save time for a clear 400, and again on every send after
// resolution, dialing exactly the address checked (no second lookup for a
// rebinding DNS server to answer differently).

// blocked are ranges no webhook may reach, beyond what netip classifies.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64: wraps any IPv4 address
	netip.MustParsePrefix("2002::/16"),    // 6to4: likewise
}

// refusal says why ip is off limits, or "" when it is a public address.
func refusal(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local (cloud metadata)"
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "not a unicast"
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return "reserved"
		}
	}
	return ""
}

// CheckURL validates an endpoint URL at save time: its scheme, and every
// address its host resolves to. The error names the url field.
func (s Settings) CheckURL(ctx context.Context, raw string) error {
	s = s.withDefaults()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return apierr.Invalid("url", "url must be an absolute https URL, e.g. https://example.com/webhooks")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && s.AllowHTTP:
	case u.Scheme == "http":
		return apierr.Invalid("url", "url must use https (http needs the webhooks.allow_http setting)")
	default:
		return apierr.Invalid("url", "url must use https")
	}
	if u.User != nil {
		return apierr.Invalid("url", "url must not carry credentials")
	}
	if u.Fragment != "" {
		return apierr.Invalid("url", "url must not have a fragment")
	}
	if s.AllowPrivateNetworks {
		return nil
	}
	if _, err := s.addrs(ctx, u.Hostname()); err != nil {
		return apierr.Invalid("url", "url is refused: %v", err)
	}
	return nil
}

// addrs resolves host and refuses it unless every address is public: one
// private answer among public ones is a rebinding attempt as likely as not.
func (s Settings) addrs(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(host, ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return nil, &RefusedError{msg: host + " is loopback"}
	}
	var out []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		out = []netip.Addr{ip}
	} else {
		found, err := s.Resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("%s does not resolve", host)
		}
		for _, a := range found {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s has no address", host)
		}
	}
	if s.AllowPrivateNetworks {
		return out, nil
	}
	for _, ip := range out {
		if why := refusal(ip); why != "" {
			return nil, &RefusedError{msg: fmt.Sprintf("%s resolves to %s, a %s address", host, ip, why)}
		}
	}
	return out, nil
}

// RefusedError is the guard's refusal of an address: nothing was dialed.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// dial connects to addr (host:port) through the guard: resolve, check
// every address, dial the first that answers.
func (s Settings) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := s.addrs(ctx, host)
	if err != nil {
		return nil, err
	}
	var last error
	for _, ip := range ips {
		c, err := s.Dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}
