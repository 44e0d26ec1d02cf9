package shortcut

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent/database"
)

// q matches a row when every word of q starts a word of one of its searched
// columns. Mostly distinct columns are in the word index (SQLite FTS4,
// PostgreSQL GIN); a Few column, whose values repeat (the client's name on
// every invoice), is counted per distinct value in search_values and paged
// through a (workspace_id, column, created_at, id) index. A token that
// starts no value is looked up in the word index and its few rows checked
// one by one; rows whose value covers every token are counted and paged
// from the values. Anything bigger falls back to an exact SQL condition.

const (
	valuesTable   = "search_values"
	valuesGen     = "search_values_gen"
	valuesLog     = "search_values_log"
	tokenizeTable = "search_tokenize"
	valuesVersion = "v3" // changes whenever the value triggers do
	maxTokens     = 16   // bounds the words of q that are searched
)

// probeCap bounds the rows a search checks one by one.
var probeCap atomic.Int64

func init() { probeCap.Store(2000) }

// SetProbeCap sets probeCap (tests cover both ways) and returns the old one.
func SetProbeCap(n int) int { return int(probeCap.Swap(int64(n))) }

func (d *Set) migrateValues(ctx context.Context, searches []Search) error {
	var few []Search
	var sig []string
	for _, s := range searches {
		if s.few() != "" {
			few = append(few, s)
			sig = append(sig, s.Table+"."+s.few())
		}
	}
	marker := valuesVersion + ":" + strings.Join(sig, ",")
	return d.db.Rebuild(ctx, "search_values_version", marker, nil, func(*sql.Tx) ([]string, error) {
		d.valuesCache.reset() // an earlier schema's values must not survive
		var stmts []string
		for _, t := range countedTables() {
			for _, suffix := range []string{"_values_ai", "_values_ad", "_values_au"} {
				stmts = append(stmts, d.sql.dropTrigger(t+suffix, t))
			}
		}
		stmts = append(stmts, "DROP TABLE IF EXISTS "+valuesGen, "DROP TABLE IF EXISTS "+valuesTable, "DROP TABLE IF EXISTS "+valuesLog,
			`CREATE TABLE `+valuesTable+` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL, value TEXT NOT NULL,
			shard INTEGER NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (workspace_id, tbl, value, shard))`,
			// gen grows with each new value: the cached values know to reload.
			`CREATE TABLE `+valuesGen+` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL, gen BIGINT NOT NULL,
			PRIMARY KEY (workspace_id, tbl))`,
			// Each new value under the gen it made, so a reload reads only those.
			`CREATE TABLE `+valuesLog+` (workspace_id TEXT NOT NULL, tbl TEXT NOT NULL, gen BIGINT NOT NULL, value TEXT NOT NULL)`,
			`CREATE INDEX `+valuesLog+`_gen ON `+valuesLog+` (workspace_id, tbl, gen)`)
		bumpGen := fmt.Sprintf("INSERT INTO %[1]s (workspace_id, tbl, gen) VALUES (new.workspace_id, new.tbl, 1) "+
			"ON CONFLICT (workspace_id, tbl) DO UPDATE SET gen = %[1]s.gen + 1; "+
			"INSERT INTO %[2]s (workspace_id, tbl, gen, value) SELECT workspace_id, tbl, gen, new.value FROM %[1]s "+
			"WHERE workspace_id = new.workspace_id AND tbl = new.tbl;", valuesGen, valuesLog)
		stmts = append(stmts, d.sql.newValueTrigger(bumpGen)...)
		for _, s := range few {
			t, c := s.Table, s.few()
			// The index that pages the rows of a few-valued column.
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX IF NOT EXISTS %[1]s_%[2]s_newest ON %[1]s (workspace_id, %[2]s, created_at, id)", t, c))
			stmts = append(stmts, d.sql.valuesTriggers(t, c)...)
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (workspace_id, tbl, value, shard, n) SELECT workspace_id, '%s', coalesce(%s, ''), 0, COUNT(*) FROM %s GROUP BY 1, 3",
				valuesTable, t, c, t))
		}
		return stmts, nil
	})
}

// values are a workspace's distinct values of a table's Few column, with
// their words as the word index would fold them.
type values struct {
	vals   []string
	at     map[string]int // index of each value in vals
	byWord []wordOf       // every word of every value, sorted for binary search
}

// wordOf is one word of value val.
type wordOf struct {
	word string
	val  int
}

// index adds added, the words of new values, to byWord, in a new slice
// (the old one may be in use by other searches).
func (x *values) index(added []wordOf) {
	if len(added) == 0 {
		return
	}
	order := func(a, b wordOf) int { return cmp.Or(strings.Compare(a.word, b.word), a.val-b.val) }
	slices.SortFunc(added, order)
	merged := make([]wordOf, 0, len(x.byWord)+len(added))
	old := x.byWord
	for len(old) > 0 && len(added) > 0 {
		if order(old[0], added[0]) <= 0 {
			merged, old = append(merged, old[0]), old[1:]
		} else {
			merged, added = append(merged, added[0]), added[1:]
		}
	}
	x.byWord = append(append(merged, old...), added...)
}

// startedBy is the values (ascending) with a word that token t starts.
func (x *values) startedBy(t string) []int {
	i, _ := slices.BinarySearchFunc(x.byWord, t, func(w wordOf, t string) int { return strings.Compare(w.word, t) })
	var out []int
	for ; i < len(x.byWord) && strings.HasPrefix(x.byWord[i].word, t); i++ {
		out = append(out, x.byWord[i].val)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fewValues is a workspace's distinct values of a table's Few column at
// generation g (not valid: no values yet). After the first read, only the
// values logged since the cached generation are read and folded.
func (d *Set) fewValues(ctx context.Context, wsID, table string, g sql.NullInt64) (*values, error) {
	if !g.Valid {
		return &values{}, nil
	}
	gen := g.Int64
	key := wsID + "|" + table
	if c, ok := d.valuesCache.get(key, gen); ok {
		return c, nil
	}
	// A later value makes gen newer, so the next search reads it; a value
	// read twice (a race, or a second PostgreSQL shard) is kept once.
	var q string
	var args []any
	old, oldGen, ok := d.valuesCache.last(key)
	if ok && oldGen < gen && d.db.Uses("valuesLog") {
		q, args = "SELECT value FROM "+valuesLog+" WHERE workspace_id = ? AND tbl = ? AND gen > ? AND gen <= ?", []any{wsID, table, oldGen, gen}
	} else {
		old, q, args = nil, "SELECT DISTINCT value FROM "+valuesTable+" WHERE workspace_id = ? AND tbl = ?", []any{wsID, table}
	}
	vals, err := database.QueryStrings(ctx, d.db.ReadPool, d.db.Rebind(q), args...)
	if err != nil {
		return nil, err
	}
	// A copy: old may be in use by other searches.
	c := &values{at: map[string]int{}}
	if old != nil {
		c = &values{vals: slices.Clip(old.vals), at: maps.Clone(old.at), byWord: old.byWord}
	}
	var added []wordOf
	for _, v := range vals {
		if _, dup := c.at[v]; dup {
			continue
		}
		i := len(c.vals)
		c.at[v], c.vals = i, append(c.vals, v)
		var words []string
		if ascii(v) {
			words = SearchTokens(v) // what unicode61 and PostgreSQL's fold make of ASCII
		} else {
			var w sql.NullString
			if err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind("SELECT "+d.sql.wordsOf("?")), v).Scan(&w); err != nil {
				return nil, err
			}
			words = strings.Fields(w.String)
		}
		for _, w := range words {
			added = append(added, wordOf{w, i})
		}
	}
	c.index(added)
	d.valuesCache.put(key, gen, c)
	return c, nil
}

func ascii(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
}

// Found is the answer of Find.
type Found struct {
	// Cond is an exact SQL condition on the table aliased t keeping the
	// rows that match, with its arguments; empty when q holds no word.
	Cond    string
	Args    []any
	Counted bool // Total is the exact number of matches
	Total   int64
	// Page: Cond keeps exactly the rows of the requested page. IDs, when
	// not nil, are their ids in order, sparing a visit to cached records.
	Page bool
	IDs  []string
	sub  string // the word index query whose keys are exactly the matches (SQLite), if any
}

// paged is the Found of a page whose keys the search read.
func (d *Set) paged(total int64, keys []any, ids []string) Found {
	b, _ := json.Marshal(keys)
	return Found{Cond: d.sql.rowKey() + " IN " + d.sql.jsonList(), Args: []any{string(b)}, Counted: true, Total: total, Page: true, IDs: ids}
}

// search is one q being answered.
type search struct {
	d     *Set
	s     Search
	wsID  string
	toks  []string
	vals  *values
	cover [][]int  // per token, the values it starts a word of
	full  []int    // the values that cover every token
	bare  []string // the tokens no value covers
	cap   int      // probeCap, read once
	// probeCached: small probe answers are cached while tableGen holds.
	probeCached   bool
	tableGen      int64
	offset, limit int // the page asked for
}

// Find answers q over the workspace's rows of s.Table. With whole (the list
// has no other condition) it also counts the matches and picks the page at
// offset, when that is cheap; otherwise it answers a condition.
func (d *Set) Find(ctx context.Context, s Search, wsID, q string, whole bool, offset, limit int) (Found, error) {
	toks, folded, err := d.sql.foldTokens(ctx, d, q)
	if err != nil {
		return Found{}, err
	}
	if !folded {
		toks = SearchTokens(q)
	}
	if toks = appendNew(nil, toks[:min(len(toks), maxTokens)]...); len(toks) == 0 {
		return Found{}, nil
	}
	x := &search{d: d, s: s, wsID: wsID, toks: toks, vals: &values{}, cover: make([][]int, len(toks)), cap: int(probeCap.Load()), offset: offset, limit: limit,
		probeCached: d.db.Dialect == dialect.SQLite && hasWorkspaceColumn(s.Table) && d.db.Uses("probeCache")}
	if s.few() != "" || x.probeCached {
		g, err := d.searchGensOf(ctx, wsID, s.Table)
		if err != nil {
			return Found{}, err
		}
		x.tableGen = g.table
		if s.few() != "" {
			if x.vals, err = d.fewValues(ctx, wsID, s.Table, g.values); err != nil {
				return Found{}, err
			}
		}
	}
	for ti, t := range toks {
		x.cover[ti] = x.vals.startedBy(t)
		if len(x.cover[ti]) == 0 {
			x.bare = append(x.bare, t)
		}
	}
	x.full = slices.Clone(x.cover[0])
	for _, c := range x.cover[1:] {
		x.full = slices.DeleteFunc(x.full, func(vi int) bool { _, in := slices.BinarySearch(c, vi); return !in })
	}
	if whole {
		f, ok, err := x.page(ctx, offset, limit)
		if err != nil || ok {
			return f, err
		}
	}
	// Filtered too, the matches are taken to be few (the planner fetches
	// them by key), as a filter rarely keeps many of them.
	f := x.cond()
	if f.sub != "" && whole {
		return x.countSub(ctx, f)
	}
	return f, nil
}

// maxKeys bounds the match keys carried from the count to the page query.
const maxKeys = 50_000

// countSub counts the matches one word index query selects and hands their
// keys to the page query, so the index is searched once.
func (x *search) countSub(ctx context.Context, f Found) (Found, error) {
	d := x.d
	var keys string
	q := "SELECT " + d.sql.jsonAgg("docid") + ", COUNT(*) FROM (" + f.sub + " LIMIT " + strconv.Itoa(maxKeys+1) + ") x"
	if err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind(q), f.Args...).Scan(&keys, &f.Total); err != nil {
		return Found{}, err
	}
	if f.Total <= maxKeys {
		f.Cond, f.Args = d.sql.rowKey()+" IN "+d.sql.jsonList(), []any{keys}
	} else if err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind("SELECT COUNT(*) FROM ("+f.sub+") x"), f.Args...).Scan(&f.Total); err != nil {
		return Found{}, err
	}
	f.Counted = true
	// Fetching every match by key and sorting beats walking the newest-first
	// index while matches² · 25 ≤ (offset+limit) · rows (docs/performance.md).
	if rows, ok := d.Count(ctx, x.wsID, x.s.Table, ""); ok && f.Total*f.Total*25 > int64(x.offset+x.limit)*rows {
		f.Cond = d.sql.manyAmong(f.Cond)
	}
	return f, nil
}

// searchGens are the generations a search depends on: the values' (cached
// names) and the table's (cached probes).
type searchGens struct {
	values sql.NullInt64
	table  int64
}

// searchGensOf reads both generations in one round trip.
func (d *Set) searchGensOf(ctx context.Context, wsID, table string) (searchGens, error) {
	var g searchGens
	err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind("SELECT (SELECT gen FROM "+valuesGen+" WHERE workspace_id = ? AND tbl = ?), ("+tableGenSQL+")"),
		wsID, table, wsID, table).Scan(&g.values, &g.table)
	return g, err
}

// cond is the exact condition: every token starts a word of the word index
// or of the row's value.
func (x *search) cond() Found {
	d, s := x.d, x.s
	hasWords := len(s.words()) > 0
	var parts []string
	var args []any
	if len(x.bare) > 0 {
		if !hasWords {
			return Found{Cond: "1 = 0"}
		}
		c, a, sub := d.sql.wordsCond(s, x.wsID, x.bare, false)
		if len(x.bare) == len(x.toks) && sub != "" {
			return Found{Cond: c, Args: a, sub: sub}
		}
		parts, args = append(parts, c), append(args, a...)
	}
	for ti, vs := range x.cover {
		if len(vs) == 0 {
			continue
		}
		c, a := "t."+s.few()+" IN "+d.sql.jsonList(), []any{x.valueList(vs)}
		if hasWords {
			wc, wa, _ := d.sql.wordsCond(s, x.wsID, []string{x.toks[ti]}, false)
			c, a = "("+wc+" OR "+c+")", append(wa, a...)
		}
		parts, args = append(parts, c), append(args, a...)
	}
	return Found{Cond: strings.Join(parts, " AND "), Args: args}
}

func (x *search) valueList(vs []int) any {
	out := make([]string, len(vs))
	for i, vi := range vs {
		out[i] = x.vals.vals[vi]
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// page counts and pages the matches when few rows need checking; ok is
// false when the condition must do it.
func (x *search) page(ctx context.Context, offset, limit int) (Found, bool, error) {
	hasWords := len(x.s.words()) > 0
	if len(x.bare) > 0 {
		if !hasWords {
			return Found{Cond: "1 = 0", Counted: true, Page: true}, true, nil
		}
		if len(x.toks) == 1 {
			return Found{}, false, nil // one index query answers it (countSub on SQLite)
		}
		// Every match has the bare tokens in the word index: look up the
		// longest (the rarest, as a rule) alone.
		t := slices.MaxFunc(x.bare, func(a, b string) int { return len(a) - len(b) })
		keys, n, err := x.probe(ctx, []string{t}, false)
		if err != nil || n > x.cap {
			return Found{}, false, err
		}
		m, err := x.check(ctx, keys)
		if err != nil {
			return Found{}, false, err
		}
		return x.d.window(m, offset, limit), true, nil
	}
	// Every token starts a word of some value: the rows of the values that
	// cover all tokens match, plus rows that need the word index for some
	// token, which hold at least one token there.
	var extra []match // newest first
	if hasWords {
		keys, n, err := x.probe(ctx, x.toks, true)
		if err != nil || n > x.cap {
			return Found{}, false, err
		}
		if n > 0 {
			m, err := x.check(ctx, keys)
			if err != nil {
				return Found{}, false, err
			}
			extra = slices.DeleteFunc(m, func(r match) bool {
				vi, known := x.vals.at[r.value]
				_, full := slices.BinarySearch(x.full, vi)
				return known && full
			})
		}
	}
	if len(x.full) == 0 {
		return x.d.window(extra, offset, limit), true, nil
	}
	d, t, few := x.d, x.s.Table, x.s.few()
	// One value (a whole name) is a key lookup; several go through a list.
	in, vl := " = ?", any(x.vals.vals[x.full[0]])
	if len(x.full) > 1 {
		in, vl = " IN "+d.sql.jsonList(), x.valueList(x.full)
	}
	// The count rides on every row of the page (run once: it does not
	// depend on the row), so both come from one snapshot; it is read alone
	// when the page is empty.
	count := "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM " + valuesTable + " WHERE workspace_id = ? AND tbl = ? AND value" + in
	args := []any{x.wsID, t, vl}
	counted := ", (" + count + ")"
	// The page merges the first offset+limit rows of each value's index
	// (and the extra rows).
	var q string
	if len(x.full) == 1 && len(extra) == 0 {
		// One value's rows alone: a stretch of its index, without a merge.
		q = "SELECT " + d.sql.rowKey() + " AS k, t.id AS i" + counted + " FROM " + t + " t WHERE t.workspace_id = ? AND t." + few + " = ?" +
			" ORDER BY t.created_at DESC, t.id DESC" + database.LimitOffset(limit)
		args = append(args, x.wsID, x.vals.vals[x.full[0]], offset)
	} else {
		var arms []string
		arm := func(cond string) string {
			return "SELECT * FROM (SELECT " + d.sql.rowKey() + " AS k, t.created_at AS c, t.id AS i FROM " + t + " t" +
				" WHERE t.workspace_id = ? AND " + cond + " ORDER BY t.created_at DESC, t.id DESC LIMIT " + strconv.Itoa(offset+limit) + ") a" + strconv.Itoa(len(arms))
		}
		if len(x.full) <= 64 && offset+limit <= x.cap/2 {
			for _, vi := range x.full {
				arms = append(arms, arm("t."+few+" = ?"))
				args = append(args, x.wsID, x.vals.vals[vi])
			}
		} else {
			arms = append(arms, arm("t."+few+" IN "+d.sql.jsonList()))
			args = append(args, x.wsID, x.valueList(x.full))
		}
		if len(extra) > 0 {
			all := d.window(extra, 0, len(extra))
			arms = append(arms, "SELECT "+d.sql.rowKey()+" AS k, t.created_at AS c, t.id AS i FROM "+t+" t WHERE "+all.Cond)
			args = append(args, all.Args...)
		}
		q = "SELECT k, i" + counted + " FROM (" + strings.Join(arms, " UNION ALL ") + ") u ORDER BY c DESC, i DESC" + database.LimitOffset(limit)
		args = append(args, offset)
	}
	f, err := x.pageRows(ctx, q, args, count)
	f.Total += int64(len(extra))
	return f, err == nil, err
}

// pageRows reads the page query's rows with the count (whose arguments come
// first), and the count alone when the page is empty.
func (x *search) pageRows(ctx context.Context, q string, args []any, count string) (Found, error) {
	d := x.d
	var total int64
	keys, ids := []any{}, []string{}
	var k any
	var id string
	if err := database.EachRow(ctx, d.db.ReadPool, d.db.Rebind(q), args, []any{&k, &id, &total}, func() { keys, ids = append(keys, k), append(ids, id) }); err != nil {
		return Found{}, err
	}
	if len(keys) == 0 {
		if err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind(count), args[:3]...).Scan(&total); err != nil {
			return Found{}, err
		}
	}
	return d.paged(total, keys, ids), nil
}

type match struct {
	key       any
	id, value string
}

// window is the Found of m's page at offset.
func (d *Set) window(m []match, offset, limit int) Found {
	keys, ids := []any{}, []string{}
	for i := offset; i < len(m) && i < offset+limit; i++ {
		keys, ids = append(keys, m[i].key), append(ids, m[i].id)
	}
	return d.paged(int64(len(m)), keys, ids)
}

// probe looks toks up in the word index (all of them, or with or any), and
// returns at most probeCap+1 keys as a JSON array, and how many.
func (x *search) probe(ctx context.Context, toks []string, or bool) (string, int, error) {
	d := x.d
	c, args, sub := d.sql.wordsCond(x.s, x.wsID, toks, or)
	match := args[0]
	if sub == "" {
		sub = "SELECT t.id AS docid FROM " + x.s.Table + " t WHERE t.workspace_id = ? AND " + c
		args = append([]any{x.wsID}, args...)
	} // else the index query alone, without reading the table
	q := "SELECT " + d.sql.jsonAgg("docid") + ", COUNT(*) FROM (" + sub + " LIMIT " + strconv.Itoa(x.cap+1) + ") x"
	// On SQLite a prefix next to a word of most rows reads that word's whole
	// doclist, so small answers are kept while the word index is unchanged.
	var key string
	if x.probeCached {
		key = fmt.Sprintf("%s|%s|%v|%d", x.wsID, x.s.Table, match, x.cap)
		if p, ok := d.probeCache.get(key, x.tableGen); ok {
			return p.keys, p.n, nil
		}
	}
	var keys string
	var n int
	if err := d.db.ReadPool.QueryRowContext(ctx, d.db.Rebind(q), args...).Scan(&keys, &n); err != nil {
		return "", 0, err
	}
	if x.probeCached && n <= 16 {
		d.probeCache.put(key, x.tableGen, probed{keys: keys, n: n})
	}
	return keys, n, nil
}

type probed struct {
	keys string
	n    int
}

// check reads the rows of keys newest first and keeps those where every
// token starts a word of a searched column.
func (x *search) check(ctx context.Context, keys string) ([]match, error) {
	d, s := x.d, x.s
	few := "''"
	if s.few() != "" {
		few = "coalesce(t." + s.few() + ", '')"
	}
	words := "coalesce(" + d.sql.wordsOf(document("t.", s.Columns)) + ", '')"
	q := "SELECT " + d.sql.rowKey() + ", t.id, " + few + ", " + words + " FROM " + s.Table + " t WHERE " + d.sql.rowKey() + " IN " + d.sql.jsonList() +
		" ORDER BY t.created_at DESC, t.id DESC"
	var out []match
	var m match
	var w string
	err := database.EachRow(ctx, d.db.ReadPool, d.db.Rebind(q), []any{keys}, []any{&m.key, &m.id, &m.value, &w}, func() {
		fields := strings.Fields(w)
		for _, t := range x.toks {
			if !slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, t) }) {
				return // t starts none of the row's words
			}
		}
		out = append(out, m)
	})
	return out, err
}
