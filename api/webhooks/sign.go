package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// NewSecret is a signing secret: whsec_ and 32 random bytes in base64
// (Standard Webhooks: 24 to 64 bytes).
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Sign is the webhook-signature header: "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>" for each secret, space-separated, so a receiver
// still holding a rotated-out secret verifies during the overlap.
func Sign(secrets []string, id string, ts int64, body []byte) string {
	var sigs []string
	for _, sec := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sec, "whsec_"))
		if err != nil {
			continue
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}
