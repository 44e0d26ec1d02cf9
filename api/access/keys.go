// Package access decides who may call /v1: API key secrets and their
// hashes, the principal a key stands for, roles and plan gating. The admin
// UI and the command line use it to mint keys; the API to check them.
package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strings"
)

// SecretPrefix starts every key secret.
const SecretPrefix = "lb_"

const secretAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSecret returns a fresh secret (lb_ + 40 base62 characters, ~238 bits),
// the short prefix shown in lists, and the hash that is stored.
func NewSecret() (secret, display, hash string) {
	var b strings.Builder
	b.WriteString(SecretPrefix)
	n := big.NewInt(int64(len(secretAlphabet)))
	for i := 0; i < 40; i++ {
		x, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err) // the system's randomness failed: nothing sensible to do
		}
		b.WriteByte(secretAlphabet[x.Int64()])
	}
	secret = b.String()
	return secret, DisplayPrefix(secret), HashSecret(secret)
}

// DisplayPrefix is what lists show of a secret: enough to tell keys apart.
func DisplayPrefix(secret string) string {
	if len(secret) > len(SecretPrefix)+6 {
		return secret[:len(SecretPrefix)+6]
	}
	return secret
}

// HashSecret is the stored form of a secret. A fast hash is right here: the
// secret has ~238 bits of entropy, so there is nothing to brute-force.
func HashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// WellFormed reports whether s could be a secret at all (cheap rejection
// of garbage before any lookup).
func WellFormed(s string) bool {
	if !strings.HasPrefix(s, SecretPrefix) || len(s) != len(SecretPrefix)+40 {
		return false
	}
	for i := len(SecretPrefix); i < len(s); i++ {
		if !inAlphabet[s[i]] {
			return false
		}
	}
	return true
}

// inAlphabet[c] says whether c is in secretAlphabet (checked on every request).
var inAlphabet = func() (t [256]bool) {
	for i := 0; i < len(secretAlphabet); i++ {
		t[secretAlphabet[i]] = true
	}
	return t
}()
