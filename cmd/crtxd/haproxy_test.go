package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/client"
	"github.com/crtx-market/crtx/store/storetest"
)

// selfSigned writes a certificate and key for 127.0.0.1 into one PEM file,
// as HAProxy's crt takes them, and returns a client that trusts it.
func selfSigned(t *testing.T, path string) *http.Client {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "crtx test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	out := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})...)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}}
}

// deploy/haproxy.cfg, run as written but for its addresses and certificate,
// in front of two replicas on one database: the request ids are HAProxy's,
// a stream passes through, and 200 calls all complete, each charged once,
// across a kill -9 of one replica, its return, and the other's drain.
func TestHAProxy(t *testing.T) {
	haproxy := needs(t, "haproxy", "haproxy")
	db := storetest.SchemaDSN(t)
	data := t.TempDir()
	token := filepath.Join(data, "admin-token")
	os.WriteFile(token, []byte("haproxy-test-admin-token-0123456789"), 0o600)
	lb, addrA, addrB := freePort(t), freePort(t), freePort(t)
	public := "https://" + lb
	replica := func(addr string) *proc {
		return startProc(t, "--addr", addr, "--db", db, "--data", data, "--admin-token-file", token, "--public-url", public,
			"--trusted-proxies", "127.0.0.1", "--allow-private-endpoints", "--lease", "1s", "--recovery-interval", "100ms", "--rate-limit-ip", "0")
	}
	a := replica(addrA)
	defer a.kill()
	b := replica(addrB)
	defer func() { b.kill() }()

	cfg, err := os.ReadFile("../../deploy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hc := selfSigned(t, filepath.Join(dir, "crtx.pem"))
	conf := strings.NewReplacer("bind :443 ", "bind "+lb+" ", "/etc/haproxy/crtx.pem", filepath.Join(dir, "crtx.pem"),
		"10.0.0.5:8080", addrA, "10.0.0.6:8080", addrB).Replace(string(cfg))
	if strings.Contains(conf, "10.0.0.") || !strings.Contains(conf, lb) {
		t.Fatalf("deploy/haproxy.cfg no longer has the addresses the test replaces:\n%s", conf)
	}
	os.WriteFile(filepath.Join(dir, "haproxy.cfg"), []byte(conf), 0o600)
	log := &syncBuffer{}
	lp := exec.Command(haproxy, "-db", "-f", filepath.Join(dir, "haproxy.cfg"))
	lp.Stdout, lp.Stderr = log, log
	if err := lp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { lp.Process.Kill(); lp.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r, err := hc.Get(public + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				// The request id is the load balancer's, kept by crtxd.
				if id := r.Header.Get("X-Request-Id"); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-`).MatchString(id) {
					t.Errorf("X-Request-Id through HAProxy is %q, not the id HAProxy set", id)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy did not serve:\n%s", log)
		}
	}

	svcURL, svcKey, svc := slowCreator(t, 200*time.Millisecond)
	admin := client.New(public, "haproxy-test-admin-token-0123456789").WithHTTPClient(hc)
	anon := client.New(public, "").WithHTTPClient(hc)
	cs, _ := walletOf(t, admin, anon, 100*crtx.MicroPerUSDC)
	agent := listAt(t, cs, svcURL, svcKey)
	us, _ := walletOf(t, admin, anon, 30*crtx.MicroPerUSDC)
	k, err := us.CreateKey(ctx, client.KeyParams{Name: "through the balancer", Environment: crtx.Mainnet})
	if err != nil {
		t.Fatal(err)
	}
	key := client.New(public, k.Key).WithHTTPClient(hc)

	// A stream, through the balancer: the record's changes as they come.
	rec, err := key.Execute(ctx, agent, crtx.ExecuteParams{Task: "streamed", Async: true}, client.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var events atomic.Int32
	var last crtx.ExecStatus
	if err := key.Events(ctx, rec.ExecutionID, func(r api.ExecutionRecord) { events.Add(1); last = r.Status }); err != nil || last != crtx.ExecCompleted {
		t.Errorf("the stream through HAProxy ended with %q after %d events: %v", last, events.Load(), err)
	}

	// 200 calls, 16 at a time. b dies (kill -9) once it has answered
	// some and comes back; then a is stopped as an upgrade stops it
	// (SIGTERM): it drains while b takes the new calls.
	servedBy := regexp.MustCompile(`crtxd/b \S+ 200 `)
	var failed atomic.Int32
	var wg sync.WaitGroup
	calls := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range calls {
				_, err := key.Execute(ctx, agent, crtx.ExecuteParams{Task: "load"}, client.ExecuteOptions{Retries: 8})
				if err != nil {
					failed.Add(1)
					t.Logf("call %d: %v", i, err)
				}
			}
		})
	}
	for i := range 200 {
		switch i {
		case 60:
			b.kill()
		case 100:
			// Back, b takes requests again once HAProxy's checks pass:
			// its log names the server each request went to.
			b = replica(addrB)
			since := len(log.String())
			for deadline := time.Now().Add(30 * time.Second); !servedBy.MatchString(log.String()[since:]); time.Sleep(50 * time.Millisecond) {
				if r, err := hc.Get(public + "/healthz"); err == nil {
					r.Body.Close()
				}
				if time.Now().After(deadline) {
					t.Fatalf("HAProxy never took b back:\n%s", log)
				}
			}
		case 150:
			a.cmd.Process.Signal(syscall.SIGTERM)
			defer func() {
				if err := a.cmd.Wait(); err != nil {
					t.Errorf("a, stopped by SIGTERM: %v", err)
				}
			}()
		}
		calls <- i
	}
	close(calls)
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of 200 calls through HAProxy failed across a kill -9", failed.Load())
	}
	page := finalExecutions(t, key, 60*time.Second)
	if page.Total != 201 {
		t.Errorf("%d executions for 201 calls: a retry ran twice, or a call was lost", page.Total)
	}
	var spent crtx.USDC
	for _, e := range page.Executions {
		if endings, err := escrowEndings(key, e.ExecutionID); err != nil || endings != 1 {
			t.Errorf("execution %s ended %d times (%v)", e.ExecutionID, endings, err)
		}
		if e.Status == crtx.ExecCompleted {
			spent += e.Cost
		}
	}
	w, _ := key.Wallet(ctx)
	if bal := w.Balances[crtx.Mainnet]; bal.Escrowed != 0 || bal.Available != 30*crtx.MicroPerUSDC-spent {
		t.Errorf("caller %+v after spending %s", bal, spent)
	}
	t.Logf("%d executions through HAProxy, %d taken over after the kill", page.Total, svc.takenOver())
}
