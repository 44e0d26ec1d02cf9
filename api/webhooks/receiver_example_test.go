package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/ledgerbase/ledgerbase/api/webhooks"
)

// The README's webhook receiver is this code, compiled and run here: the
// lines between the markers are the README's Go block, byte for byte.

// README receiver begin
// event is what a delivery's body holds (json matches names ignoring case).
type event struct {
	ID, Type string
	Data     struct{ Object json.RawMessage }
}

// receiver checks each delivery's signature with the Standard Webhooks
// library, then hands the event on. A retry carries the same ID. Answer
// 2xx within 10 s, or the delivery is retried.
func receiver(secret string, handle func(event)) http.Handler {
	wh, err := standardwebhooks.NewWebhook(secret) // "whsec_…", shown once
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var e event
		if err != nil || wh.Verify(body, r.Header) != nil || json.Unmarshal(body, &e) != nil {
			http.Error(w, "refused", http.StatusBadRequest)
			return
		}
		handle(e)
		w.WriteHeader(http.StatusNoContent)
	})
}

// README receiver end

// The receiver accepts a delivery signed as the worker signs it, and
// refuses one whose body was changed on the way.
func Example_receiver() {
	secret := webhooks.NewSecret()
	srv := httptest.NewServer(receiver(secret, func(e event) {
		fmt.Println("got", e.ID, e.Type, string(e.Data.Object))
	}))
	defer srv.Close()
	body := []byte(`{"id":"evt_1","object":"event","type":"invoice.paid","data":{"object":{"id":"inv_1","status":"paid"}}}`)
	send := func(b []byte) {
		ts := time.Now().Unix()
		req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader(b))
		req.Header.Set("webhook-id", "evt_1")
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("webhook-signature", webhooks.Sign([]string{secret}, "evt_1", ts, body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		res.Body.Close()
		fmt.Println(res.StatusCode)
	}
	send(body)
	send(bytes.Replace(body, []byte(`"paid"}`), []byte(`"void"}`), 1))
	// Output:
	// got evt_1 invoice.paid {"id":"inv_1","status":"paid"}
	// 204
	// 400
}

func TestReadmeReceiverIsTheExample(t *testing.T) {
	src, err := os.ReadFile("receiver_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	code := strings.TrimRight(between(t, string(src), "// README receiver begin\n", "// README receiver end"), "\n")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := between(t, string(readme), "<!-- code: api/webhooks/receiver_example_test.go -->\n```go\n", "```\n")
	if block != code+"\n" {
		t.Fatalf("the README's receiver is not the tested one; README:\n%s\ntested:\n%s", block, code)
	}
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	_, after, ok := strings.Cut(s, from)
	if !ok {
		t.Fatalf("no %q", from)
	}
	in, _, ok := strings.Cut(after, to)
	if !ok {
		t.Fatalf("no %q after %q", to, from)
	}
	return in
}
