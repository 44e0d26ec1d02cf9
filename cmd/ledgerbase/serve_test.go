package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

func TestHealthAndReadinessFollowTheDatabase(t *testing.T) {
	t.Parallel()
	db := ownDB(t)
	r := start(t, testConfig(), quiet, db)
	r.env.Get(t, "/healthz", "").WantStatus(t, 200)
	if b := string(r.env.Get(t, "/readyz", "").WantStatus(t, 200).Body); !strings.Contains(b, `"ok"`) {
		t.Errorf("/readyz body %s", b)
	}
	db.Close() // the database is gone
	res := r.env.Get(t, "/readyz", "").WantStatus(t, 503)
	if b := string(res.Body); !strings.Contains(b, "database_unavailable") || strings.Contains(b, "closed") {
		t.Errorf("/readyz body %s: want the state, not the cause", b)
	}
	r.env.Get(t, "/healthz", "").WantStatus(t, 200) // the process still lives
}

func TestShutdownFinishesRequestsInFlightAndRefusesNewOnes(t *testing.T) {
	t.Parallel()
	db := ownDB(t)
	entered, release := make(chan struct{}), make(chan struct{})
	slow := func(app *fiber.App) { // test-only route that holds a request open
		app.Get("/test/slow", func(c *fiber.Ctx) error {
			close(entered)
			<-release
			return c.SendString("finished")
		})
	}
	cfg := testConfig()
	cfg.ShutdownDelay = time.Second // long enough to see /readyz turn 503
	r := start(t, cfg, quiet, db, slow)
	fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	r.env.Get(t, "/readyz", "").WantStatus(t, 200)

	type result struct {
		status int
		body   string
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		res, err := fresh.Get(r.url + "/test/slow")
		if err != nil {
			inflight <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		inflight <- result{status: res.StatusCode, body: string(b)}
	}()
	<-entered
	defer func() {
		select {
		case <-release:
		default:
			close(release) // do not hold the cleanup's shutdown when failing
		}
	}()

	stopped := make(chan error, 1)
	go func() { stopped <- r.a.shutdown(context.Background()) }() // what SIGTERM calls

	// Shutting down: not ready, while it still answers during the delay.
	deadline := time.Now().Add(cfg.ShutdownDelay)
	for {
		res, err := fresh.Get(r.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 503 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 503 while shutting down (last: %v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Then the listener closes: new connections are refused...
	addr := strings.TrimPrefix(r.url, "http://")
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		// A dial racing the close may be accepted into the backlog, then reset.
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("dial after shutdown: %v, want connection refused", err)
		}
		if c != nil {
			c.Close()
		}
		if time.Now().After(deadline.Add(3 * time.Second)) {
			t.Fatal("the listener still accepts connections after the shutdown delay")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("shutdown returned (%v) while a request was in flight", err)
	default:
	}
	// ...while the request in flight finishes with 200.
	close(release)
	got := <-inflight
	if got.err != nil || got.status != 200 || got.body != "finished" {
		t.Fatalf("request in flight: %+v, want 200 finished", got)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-r.served; err != nil {
		t.Errorf("serve returned %v after a graceful shutdown", err)
	}
	if err := db.Ping(context.Background()); err == nil {
		t.Error("the database is still open after shutdown")
	}
}

func TestShutdownCutsRequestsOffAfterTheGracePeriod(t *testing.T) {
	t.Parallel()
	db := ownDB(t)
	entered := make(chan struct{})
	stuck := func(app *fiber.App) {
		app.Get("/test/stuck", func(c *fiber.Ctx) error {
			close(entered)
			time.Sleep(3 * time.Second)
			return c.SendString("late")
		})
	}
	cfg := testConfig()
	cfg.ShutdownGrace = 200 * time.Millisecond
	r := start(t, cfg, quiet, db, stuck)
	go func() {
		if res, err := http.Get(r.url + "/test/stuck"); err == nil {
			res.Body.Close()
		}
	}()
	<-entered
	begin := time.Now()
	err := r.a.shutdown(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown = %v, want the grace period's deadline", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("shutdown took %v with a %v grace period", d, cfg.ShutdownGrace)
	}
}

func TestServesHTTPSWithTheConfiguredCertificate(t *testing.T) {
	t.Parallel()
	r, _, _, pool := startTLS(t)
	if !strings.HasPrefix(r.url, "https://") {
		t.Fatalf("url %s", r.url)
	}
	r.env.Client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	ws := r.env.Workspace(t, "starter", false, false)
	res := r.env.Get(t, "/v1/me", ws.Key).WantStatus(t, 200)
	if !strings.Contains(string(res.Body), ws.ID) {
		t.Errorf("/v1/me over TLS: %s", res.Body)
	}
	// Plain HTTP on the TLS port gets nothing useful.
	plain := &http.Client{Timeout: 5 * time.Second}
	if res, err := plain.Get("http://" + strings.TrimPrefix(r.url, "https://") + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Error("plain HTTP answered 200 on the TLS listener")
		}
	}
	// A client that does not trust the certificate is refused.
	if _, err := (&http.Client{Timeout: 5 * time.Second}).Get(r.url + "/healthz"); err == nil {
		t.Error("an untrusted certificate was accepted")
	}
}

func TestRefusesAMismatchedCertificatePair(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	certFile, _, _ := selfSigned(t)
	_, otherKey, _ := selfSigned(t)
	cfg := testConfig()
	cfg.TLS.Cert, cfg.TLS.Key = certFile, otherKey
	if _, err := newAppliance(cfg, quiet, db); err == nil || !strings.Contains(err.Error(), "tls") {
		t.Fatalf("newAppliance = %v, want a tls error", err)
	}
}

// startTLS runs an appliance serving HTTPS with a new certificate.
func startTLS(t *testing.T) (r *running, certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	db, _ := apitest.DB(t)
	certFile, keyFile, pool = selfSigned(t)
	cfg := testConfig()
	cfg.TLS.Cert, cfg.TLS.Key = certFile, keyFile
	return start(t, cfg, quiet, db), certFile, keyFile, pool
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool = x509.NewCertPool()
	pool.AddCert(writeSelfSigned(t, certFile, keyFile))
	return certFile, keyFile, pool
}

// writeSelfSigned writes a new certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "ledgerbase test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestReloadsARenewedCertificate(t *testing.T) {
	t.Parallel()
	r, certFile, keyFile, _ := startTLS(t)
	r.a.keyPair.mu.Lock()
	r.a.keyPair.every = 0 // look at the files on every handshake
	r.a.keyPair.mu.Unlock()
	served := func() *big.Int {
		c, err := tls.Dial("tcp", strings.TrimPrefix(r.url, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber
	}
	first := served()
	renewed := writeSelfSigned(t, certFile, keyFile)
	later := time.Now().Add(time.Minute) // a distinct modification time
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if got := served(); got.Cmp(renewed.SerialNumber) != 0 || got.Cmp(first) == 0 {
		t.Fatalf("served serial %v after renewal, want %v (was %v)", got, renewed.SerialNumber, first)
	}
	// A broken pair (key not matching) keeps the last good one serving.
	_, otherKey, _ := selfSigned(t)
	b, err := os.ReadFile(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	later = later.Add(time.Minute)
	if err := os.Chtimes(keyFile, later, later); err != nil {
		t.Fatal(err)
	}
	if got := served(); got.Cmp(renewed.SerialNumber) != 0 {
		t.Fatalf("served serial %v with a broken pair on disk, want the last good %v", got, renewed.SerialNumber)
	}
}

// `ledgerbase healthcheck` is what the Docker image's HEALTHCHECK runs.
func TestHealthcheckCommandAsksTheLocalServer(t *testing.T) {
	t.Parallel()
	db, _ := apitest.DB(t)
	plain := start(t, testConfig(), quiet, db)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(plain.url, "http://"))
	if msg, err := runCLI(t, "", "healthcheck", "--addr", "0.0.0.0:"+port); err != nil {
		t.Fatalf("healthcheck of a live server: %v %s", err, msg)
	}

	secure, certFile, keyFile, _ := startTLS(t)
	addr := strings.TrimPrefix(secure.url, "https://")
	if msg, err := runCLI(t, "", "healthcheck", "--addr", addr, "--tls-cert", certFile, "--tls-key", keyFile); err != nil {
		t.Fatalf("healthcheck over TLS: %v %s", err, msg)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	if _, err := runCLI(t, "", "healthcheck", "--addr", dead); err == nil {
		t.Error("healthcheck passed with no server listening")
	}
}
