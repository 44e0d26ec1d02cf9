package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process of the appliance: this test binary run as the ledgerbase
// command (see asCLI), on its own database URL.

// cliRun runs one ledgerbase command to its end and returns its stdout.
func cliRun(t *testing.T, dbURL string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1", "LEDGERBASE_DATABASE_URL="+dbURL)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String(), &cliError{args: args, err: err, stderr: errOut.String()}
	}
	return strings.TrimSpace(out.String()), nil
}

type cliError struct {
	args   []string
	err    error
	stderr string
}

func (e *cliError) Error() string {
	return "ledgerbase " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.stderr
}

// mustCLI is cliRun that fails the test on an error.
func mustCLI(t *testing.T, dbURL string, args ...string) string {
	t.Helper()
	out, err := cliRun(t, dbURL, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// server is a `ledgerbase serve` process on a loopback port.
type server struct {
	cmd            *exec.Cmd
	url            string
	stdout, stderr *syncBuffer
	exited         chan struct{}
	err            error // what Wait returned, once exited is closed
}

// startServer starts `ledgerbase serve` on dbURL and waits until it is
// ready. It is killed when the test ends, if it still runs.
func startServer(t *testing.T, dbURL string, extra ...string) *server {
	t.Helper()
	addr, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve", "--addr", addr, "--log-access=false"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1", "LEDGERBASE_DATABASE_URL="+dbURL)
	s := &server{cmd: cmd, url: "http://" + addr, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.exited
	})
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := probe.Get(s.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("serve exited before it was ready: %v\n%s", s.err, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve was not ready within 30 s\n%s", s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether the process still runs.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// kill9 kills the process the way a crash or the OOM killer does.
func (s *server) kill9(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.exited
}

// stop shuts the process down gracefully (SIGTERM) and checks it exited 0.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop within 30 s of SIGTERM\n%s", s.stderr)
	}
	if s.err != nil {
		t.Fatalf("serve exited with %v\n%s", s.err, s.stderr)
	}
}

// freePort is a loopback address no one listens on right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
