// Package ids makes record identifiers: a resource prefix and a
// time-sortable random part in TypeID's encoding, e.g. inv_01jd3k9x8s2c7v5bq4m6n0p1r2.
package ids

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Ids draw their randomness from a buffered pool, not a system call each;
// it must be enabled before any id is made.
func init() { uuid.EnableRandPool() }

// TypeID's alphabet: Crockford base32, lower case.
const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// QuickAt returns an id like At's with random bits from math/rand, not
// crypto/rand: for ids that need not be unguessable (request ids).
func QuickAt(prefix string, t time.Time) string {
	var u uuid.UUID
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint64(u[0:8], ms<<16|rand.Uint64()&0xffff)
	binary.BigEndian.PutUint64(u[8:16], rand.Uint64())
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return format(prefix, u)
}

// New returns a fresh id with the given prefix.
func New(prefix string) string { return At(prefix, time.Now()) }

// At returns an id whose time part is t, so records back-dated by the demo
// generator still sort by their creation time.
func At(prefix string, t time.Time) string {
	u, err := uuid.NewV7()
	if err != nil {
		panic(err) // crypto/rand failure: nothing sensible to do
	}
	ms := uint64(t.UnixMilli())
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	return format(prefix, u)
}

// Floor returns an id that sorts at or before every id At(prefix, u) makes
// for a u in t's millisecond or later, and after every one for an earlier
// millisecond: an id range that stands for a time range.
func Floor(prefix string, t time.Time) string {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(t.UnixMilli())<<16)
	return format(prefix, u)
}

// format is prefix_ and the 128 bits of u as 26 base32 characters (the
// first holds 3 bits), built in one allocation.
func format(prefix string, u uuid.UUID) string {
	var buf [64]byte
	n := len(prefix) + 1 + 26
	b := buf[:0]
	if n > len(buf) {
		b = make([]byte, 0, n)
	}
	b = append(b, prefix...)
	b = append(b, '_')
	b = b[:n]
	d := b[n-26:]
	hi, lo := binary.BigEndian.Uint64(u[0:8]), binary.BigEndian.Uint64(u[8:16])
	for i := 25; i >= 0; i-- {
		d[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(b)
}

// HasPrefix reports whether id looks like one of ours with the given prefix.
func HasPrefix(id, prefix string) bool {
	return len(id) == len(prefix)+27 && strings.HasPrefix(id, prefix+"_")
}
