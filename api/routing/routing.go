// Package routing matches request paths to the app's route patterns as
// fiber's router does, to answer 405 with Allow and to name a request's
// route even when it was refused before routing (401, 429).
package routing

import (
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Table holds the app's endpoint patterns by method.
type Table struct{ methods map[string]*methodRoutes }

// Find is the first pattern (in the app's order) of method that path
// matches, and its index among that method's patterns; -1 if none.
func (t *Table) Find(method, path string) (pattern string, i int) {
	m := t.methods[method]
	if m == nil {
		return "", -1
	}
	if i = m.first(path); i < 0 {
		return "", -1
	}
	return m.patterns[i], i
}

// Index is the index of pattern among method's patterns, -1 if it is not one.
func (t *Table) Index(method, pattern string) int {
	if m := t.methods[method]; m != nil {
		if i, ok := m.known[pattern]; ok {
			return i
		}
	}
	return -1
}

// Allowed lists, sorted, the methods with a pattern that path matches.
func (t *Table) Allowed(path string) []string {
	var out []string
	for method, m := range t.methods {
		if m.first(path) >= 0 {
			out = append(out, method)
		}
	}
	sort.Strings(out)
	return out
}

// methodRoutes are one method's patterns in the app's order, and a tree of
// their segments so a path is named without a scan of every pattern.
type methodRoutes struct {
	patterns []string
	known    map[string]int // pattern -> its first index
	root     *segNode
	scan     bool // a pattern is not plain ASCII: match by scanning
}

func newMethodRoutes() *methodRoutes {
	return &methodRoutes{known: map[string]int{}, root: newSegNode()}
}

// segNode is one segment of the patterns; the ints are pattern indexes,
// -1 for none, and the least one wins (the app's order decides).
type segNode struct {
	lit   map[string]*segNode // literal segments, ASCII lower case
	param *segNode            // ":name"
	end   int                 // a pattern ends here
	star  int                 // a pattern continues with "*" here
	plus  int                 // a pattern continues with "+" here
}

func newSegNode() *segNode { return &segNode{end: -1, star: -1, plus: -1} }

// New indexes routes (an app's GetRoutes(true): endpoints, not middleware)
// in their order.
func New(routes []fiber.Route) *Table {
	t := &Table{methods: map[string]*methodRoutes{}}
	for _, r := range routes {
		m := t.methods[r.Method]
		if m == nil {
			m = newMethodRoutes()
			t.methods[r.Method] = m
		}
		m.add(r.Path)
	}
	return t
}

func least(cur, i int) int {
	if cur < 0 || i < cur {
		return i
	}
	return cur
}

func (m *methodRoutes) add(pattern string) {
	i := len(m.patterns)
	m.patterns = append(m.patterns, pattern)
	if _, ok := m.known[pattern]; !ok {
		m.known[pattern] = i
	}
	if !plainASCII(pattern) {
		m.scan = true
		return
	}
	n := m.root
	rest := strings.Trim(pattern, "/")
	for {
		ps, more, hasMore := strings.Cut(rest, "/")
		switch {
		case ps == "*":
			n.star = least(n.star, i)
			return
		case ps == "+":
			n.plus = least(n.plus, i)
			return
		case strings.HasPrefix(ps, ":"):
			if n.param == nil {
				n.param = newSegNode()
			}
			n = n.param
		default:
			key := strings.ToLower(ps)
			if n.lit == nil {
				n.lit = map[string]*segNode{}
			}
			c := n.lit[key]
			if c == nil {
				c = newSegNode()
				n.lit[key] = c
			}
			n = c
		}
		if !hasMore {
			n.end = least(n.end, i)
			return
		}
		rest = more
	}
}

// first is the index of the first pattern path matches, or -1.
func (m *methodRoutes) first(path string) int {
	if m.scan || !plainASCII(path) {
		for i, p := range m.patterns {
			if Match(p, path) {
				return i
			}
		}
		return -1
	}
	return m.root.match(strings.Trim(path, "/"), -1)
}

// match walks the tree with the path's segments (path trimmed of slashes,
// plain ASCII), keeping the least pattern index that matches.
func (n *segNode) match(path string, best int) int {
	xs, rest, more := strings.Cut(path, "/")
	if n.star >= 0 {
		best = least(best, n.star)
	}
	if n.plus >= 0 && xs != "" {
		best = least(best, n.plus)
	}
	if n.lit != nil {
		var c *segNode
		var buf [64]byte
		switch {
		case !hasUpper(xs):
			c = n.lit[xs]
		case len(xs) <= len(buf):
			c = n.lit[string(lower(buf[:0], xs))] // a lookup by converted bytes does not allocate
		default:
			c = n.lit[strings.ToLower(xs)]
		}
		if c != nil {
			best = c.after(rest, more, best)
		}
	}
	if n.param != nil && xs != "" {
		best = n.param.after(rest, more, best)
	}
	return best
}

func (n *segNode) after(rest string, more bool, best int) int {
	if !more {
		if n.end >= 0 {
			best = least(best, n.end)
		}
		return best
	}
	return n.match(rest, best)
}

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func lower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Match reports whether fiber would route path to pattern (case-insensitive,
// trailing slash optional, ":param" segments, a trailing "*" or "+").
func Match(pattern, path string) bool {
	pattern = strings.Trim(pattern, "/")
	path = strings.Trim(path, "/")
	for {
		var ps, xs string
		var pmore, xmore bool
		ps, pattern, pmore = strings.Cut(pattern, "/")
		xs, path, xmore = strings.Cut(path, "/")
		switch {
		case ps == "*" || ps == "+":
			return ps == "*" || xs != ""
		case strings.HasPrefix(ps, ":"):
			if xs == "" {
				return false
			}
		case !strings.EqualFold(ps, xs):
			return false
		}
		if pmore != xmore {
			return false
		}
		if !pmore {
			return true
		}
	}
}
