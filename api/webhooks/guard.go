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

// Server-side request forgery: a webhook URL must not reach what the server
// can reach and the user cannot (metadata service, database, LAN). Checked
// at save time for a clear 400, and on every send after resolution,
// dialing exactly the address checked (no second lookup to rebind).

// Only globally routable unicast addresses receive webhooks, by the IANA
// special-purpose registries; IPv6 must also lie in 2000::/3, so what the
// registry adds later outside it is refused rather than reached. An IPv4
// address embedded in an IPv6 one is checked as itself (where the packet
// ends up); only mapped and well-known NAT64 ones can pass.

type block struct {
	p    netip.Prefix
	name string
}

func blocks(pairs ...string) []block {
	out := make([]block, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, block{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// v4Reserved are the IPv4 registry's blocks not globally reachable, beyond
// what netip classifies (loopback, private, link-local, multicast).
var v4Reserved = blocks(
	"0.0.0.0/8", "this-network",
	"100.64.0.0/10", "shared (carrier-grade NAT)",
	"192.0.0.0/24", "IETF protocol assignment",
	"192.0.2.0/24", "documentation",
	"192.88.99.0/24", "6to4 relay anycast",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation",
	"203.0.113.0/24", "documentation",
	"240.0.0.0/4", "future use",
)

var (
	// v6Global is the IPv6 global unicast space; v6Reserved its registry
	// blocks that are not globally reachable, the first match naming it
	// (2001::/23 whole: its few anycast exceptions serve no webhooks).
	v6Global   = netip.MustParsePrefix("2000::/3")
	v6Reserved = blocks(
		"2001::/32", "Teredo tunnel",
		"2001::/23", "IETF protocol assignment",
		"2001:db8::/32", "documentation",
		"2002::/16", "6to4 tunnel",
		"3fff::/20", "documentation",
	)
	// v6Named name some refused blocks outside 2000::/3 for the message.
	v6Named = blocks(
		"64:ff9b:1::/48", "local-use NAT64",
		"100::/64", "discard-only",
		"fec0::/10", "site-local",
		"5f00::/16", "segment routing (SRv6)",
	)
	// nat64 is the well-known NAT64 prefix (DNS64 answers in it for
	// IPv4-only hosts): a public IPv4 address behind it is public.
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

// refusal says what ip is when it is off limits ("a loopback address"),
// or "" when it is globally routable.
func refusal(ip netip.Addr) string {
	if ip.Zone() != "" {
		return "a scoped address (it names a network interface)"
	}
	ip = ip.Unmap() // an IPv4-mapped address is dialed as the IPv4 one
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata)"
	case !ip.IsGlobalUnicast(): // unspecified, multicast, broadcast
		return "not a unicast address"
	}
	if ip.Is4() {
		return reserved(v4Reserved, ip)
	}
	for _, e := range embedded(ip) {
		if why := refusal(e.v4); why != "" {
			return fmt.Sprintf("%s embedding %s, which is %s", e.kind, e.v4, why)
		}
	}
	switch {
	case nat64.Contains(ip):
		return ""
	case !v6Global.Contains(ip):
		if why := reserved(v6Named, ip); why != "" {
			return why
		}
		return "a reserved address: outside the global unicast space 2000::/3"
	}
	return reserved(v6Reserved, ip)
}

func reserved(bs []block, ip netip.Addr) string {
	for _, b := range bs {
		if b.p.Contains(ip) {
			return fmt.Sprintf("a reserved address: %s (%s)", b.name, b.p)
		}
	}
	return ""
}

// embedding is an IPv4 address inside an IPv6 one, and how it is put there.
type embedding struct {
	kind string
	v4   netip.Addr
}

// embedded are the IPv4 addresses an IPv6 address carries by a known
// scheme: RFC 4291 (compatible), RFC 2765 (translated), RFC 6052 and 8215
// (NAT64, in a /96), RFC 3056 (6to4), RFC 4380 (Teredo's server and client).
func embedded(ip netip.Addr) []embedding {
	b := ip.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case zero(0, 12):
		return []embedding{{"an IPv4-compatible address", last}}
	case zero(0, 8) && b[8] == 0xff && b[9] == 0xff && zero(10, 12):
		return []embedding{{"an IPv4-translated address", last}}
	case nat64.Contains(ip):
		return []embedding{{"a NAT64 address", last}}
	case nat64Local.Contains(ip):
		return []embedding{{"a local-use NAT64 address", last}}
	case sixToFour.Contains(ip):
		return []embedding{{"a 6to4 address", netip.AddrFrom4([4]byte(b[2:6]))}}
	case teredo.Contains(ip):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []embedding{{"a Teredo address", netip.AddrFrom4([4]byte(b[4:8]))}, {"a Teredo address", netip.AddrFrom4(client)}}
	}
	return nil
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
		out = []netip.Addr{ip.Unmap()}
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
			return nil, &RefusedError{msg: fmt.Sprintf("%s resolves to %s, %s", host, ip, why)}
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
