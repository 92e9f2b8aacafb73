package dispatch

import (
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
)

func TestPublic(t *testing.T) {
	blocked := []string{
		"127.0.0.1", "127.255.0.1", "::1", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254",
		"192.168.0.1", "169.254.169.254", "169.254.0.1", "0.0.0.0", "::", "100.64.0.1", "224.0.0.1", "239.1.1.1",
		"255.255.255.255", "240.0.0.1", "fc00::1", "fd00:ec2::254", "fe80::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "2002:7f00:1::",
		"2001:0:4136:e378::1", "::127.0.0.1", "192.0.2.1", "198.18.0.1",
		// Local-use NAT64 and SIIT carry an IPv4 address too.
		"64:ff9b:1::a00:1", "64:ff9b:1::7f00:1", "64:ff9b:1:a00:1::", "64:ff9b:1:0:808:808::", "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe",
	}
	for _, s := range blocked {
		if Public(netip.MustParseAddr(s)) {
			t.Errorf("%s counts as public", s)
		}
	}
	public := []string{"93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "172.15.255.255", "2606:4700::1111",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::", "64:ff9b:1::808:808", "::ffff:0:808:808"}
	for _, s := range public {
		if !Public(netip.MustParseAddr(s)) {
			t.Errorf("%s counts as private", s)
		}
	}
	if Public(netip.Addr{}) {
		t.Error("the zero address counts as public")
	}
}

func newCaller(allowPrivate bool, names map[string][]string) *Caller {
	_, key, _ := ed25519.GenerateKey(nil)
	return New(Options{Signer: key, AllowPrivate: allowPrivate, LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, s := range names[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if len(out) == 0 {
			return nil, errors.New("no such host")
		}
		return out, nil
	}})
}

func TestCheckURL(t *testing.T) {
	c := newCaller(false, map[string][]string{"agent.example": {"93.184.216.34"}, "inside.example": {"93.184.216.34", "10.0.0.7"}})
	ctx := context.Background()
	for raw, code := range map[string]string{
		"https://agent.example/execute":          "",
		"https://93.184.216.34:8443/execute":     "",
		"http://agent.example/execute":           crtx.CodeInvalidRequest,
		"ftp://agent.example/execute":            crtx.CodeInvalidRequest,
		"https://user:pw@agent.example/":         crtx.CodeInvalidRequest,
		"https:///execute":                       crtx.CodeInvalidRequest,
		"/execute":                               crtx.CodeInvalidRequest,
		"https://127.0.0.1/execute":              crtx.CodeInvalidRequest,
		"https://[::ffff:127.0.0.1]/execute":     crtx.CodeInvalidRequest,
		"https://169.254.169.254/latest":         crtx.CodeInvalidRequest,
		"https://inside.example/execute":         crtx.CodeEndpointUnreachable,
		"https://nowhere.example/execute":        crtx.CodeEndpointUnreachable,
		"https://agent.example:99999/execute":    crtx.CodeInvalidRequest,
		"https://[fe80::1%25eth0]:443/execute":   crtx.CodeInvalidRequest,
		"https://agent.example/execute?x=1#frag": "",
	} {
		err := c.CheckURL(ctx, "endpoint_url", raw)
		if code == "" && err != nil || code != "" && crtx.ErrorCode(err) != code {
			t.Errorf("%s: %v, want %q", raw, err, code)
		}
		if err != nil && !strings.Contains(crtx.ErrorMessage(err), "endpoint_url") {
			t.Errorf("%s: message %q does not name the field", raw, crtx.ErrorMessage(err))
		}
	}
	if err := newCaller(true, nil).CheckURL(ctx, "endpoint_url", "http://127.0.0.1:9/execute"); err != nil {
		t.Errorf("private endpoints allowed: %v", err)
	}
}

func callErr(t *testing.T, err error) *crtx.CallError {
	t.Helper()
	var ce *crtx.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a CallError", err)
	}
	return ce
}

// Dial-time refusal: even when the URL check is skipped, a private address
// is never connected to.
func TestDialRefusesPrivateAddresses(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	c := newCaller(false, map[string][]string{"rebind.example": {"127.0.0.1"}})
	for _, u := range []string{srv.URL, "http://rebind.example:" + port} {
		_, err := c.Call(context.Background(), u, crtx.RequestScope{Environment: crtx.Mainnet, Test: true}, crtx.CreatorRequest{ExecutionID: "x"}, nil)
		ce := callErr(t, err)
		if !errors.Is(err, ErrBlocked) || !ce.NoResponse {
			t.Errorf("%s: %v", u, err)
		}
	}
	if hit {
		t.Fatal("a private address was reached")
	}
}

// Deliveries (webhooks and A2A pushes, which share them) never reach a
// private address: not by its literal, not by a name that resolves to it
// at delivery time, and not by a redirect, which is answered as it is
// (a failed delivery, tried again later) and never followed.
func TestDeliverReachesNoPrivateAddress(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	hit := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[name]++
			mu.Unlock()
			if name == "redirecting" {
				http.Redirect(w, r, "http://127.0.0.1:"+r.URL.Query().Get("to")+"/hook", http.StatusTemporaryRedirect)
			}
		})
	}
	inside := httptest.NewServer(hit("inside"))
	defer inside.Close()
	port := inside.URL[strings.LastIndex(inside.URL, ":")+1:]
	c := newCaller(false, map[string][]string{"rebind.example": {"127.0.0.1"}, "ten.example": {"10.0.0.9"}})
	for _, u := range []string{inside.URL + "/hook", "http://rebind.example:" + port + "/hook", "http://ten.example:" + port + "/hook"} {
		if status, err := c.Deliver(context.Background(), u, "msg_1", crtx.Mainnet, []byte(`{}`), nil, nil); !errors.Is(err, ErrBlocked) {
			t.Errorf("a delivery to %s: %d, %v; want it blocked", u, status, err)
		}
	}
	// Even where private addresses are allowed (development), a redirect
	// is not followed.
	redirecting := httptest.NewServer(hit("redirecting"))
	defer redirecting.Close()
	open := newCaller(true, nil)
	if status, err := open.Deliver(context.Background(), redirecting.URL+"/hook?to="+port, "msg_2", crtx.Mainnet, []byte(`{}`), nil, nil); err != nil ||
		status != http.StatusTemporaryRedirect {
		t.Errorf("a delivery answered by a redirect: %d, %v; want the redirect's status", status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["inside"] != 0 || hits["redirecting"] != 1 {
		t.Errorf("deliveries reached %v; want the redirecting server once and the inside one never", hits)
	}
}

func TestCallFailures(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
	})
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/junk", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"result":"`))
		w.Write([]byte(strings.Repeat("a", 9<<20)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	var got http.Header
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Write([]byte(`{"execution_id":"x","status":"failed","error":"no"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := newCaller(true, nil)
	ctx := context.Background()
	call := func(path string, timeout time.Duration) error {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		_, err := c.Call(cctx, srv.URL+path, crtx.RequestScope{Environment: crtx.Devnet}, crtx.CreatorRequest{ExecutionID: "x"}, nil)
		return err
	}
	for path, code := range map[string]string{
		"/redirect": crtx.CodeInvalidAgentResponse, "/500": crtx.CodeInvalidAgentResponse,
		"/junk": crtx.CodeInvalidAgentResponse, "/big": crtx.CodeInvalidAgentResponse,
	} {
		if ce := callErr(t, call(path, 5*time.Second)); ce.Code != code || ce.NoResponse {
			t.Errorf("%s: %+v", path, ce)
		}
	}
	if ce := callErr(t, call("/slow", 200*time.Millisecond)); ce.Code != crtx.CodeExecutionTimeout {
		t.Errorf("slow: %+v", ce)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if ce := callErr(t, func() error {
		_, err := c.Call(ctx, closed.URL, crtx.RequestScope{Environment: crtx.Devnet}, crtx.CreatorRequest{ExecutionID: "x"}, nil)
		return err
	}()); !ce.NoResponse || ce.Message != "the agent's service could not be reached: the connection was refused" {
		t.Errorf("closed port: %+v", ce)
	}
	if err := call("/ok", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got.Get(crtx.HeaderEnvironment) != "devnet" || got.Get(crtx.HeaderTest) != "" ||
		!strings.HasPrefix(got.Get(crtx.HeaderSignature), "ed25519:") || got.Get(crtx.HeaderTimestamp) == "" {
		t.Errorf("request headers: %v", got)
	}
}

// Trace records what was sent and what came back, as a creator testing an
// endpoint reads it: a refused answer's body, a long body cut, nothing at
// all from a closed port.
func TestTraceRecordsTheExchange(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", "edge-1")
		http.Error(w, "database is down", 500)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"result":"`))
		w.Write([]byte(strings.Repeat("é", 5000)))
	})
	mux.HandleFunc("/big500", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("x", 100_000), 500)
	})
	held := make(chan struct{})
	defer close(held)
	mux.HandleFunc("/held500", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-held:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/escape", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		w.Write([]byte("\x1b]52;c;cGF3bmVk\x07red\x1b[31m\x00 line\r\nnext\ttab"))
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(502)
		z := gzip.NewWriter(w)
		z.Write([]byte("compressed error"))
		z.Close()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := newCaller(true, nil)
	scope := crtx.RequestScope{Environment: crtx.Mainnet, SigningKey: "KEY", Test: true}
	req := crtx.CreatorRequest{ExecutionID: "x-1", Task: "crtx reachability test"}

	_, ex, err := c.Trace(context.Background(), srv.URL+"/500", scope, req)
	if ce := callErr(t, err); ce.Code != crtx.CodeInvalidAgentResponse {
		t.Errorf("500: %+v", ce)
	}
	for _, want := range []string{"POST /500 HTTP/1.1\n", "Host: " + strings.TrimPrefix(srv.URL, "http://") + "\n",
		"X-Crtx-Test: true\n", "X-Crtx-Signing-Key: KEY\n", "X-Crtx-Signature: ed25519:", "\n\n{\"execution_id\":\"x-1\""} {
		if !strings.Contains(ex.Request, want) {
			t.Errorf("the request sent lacks %q:\n%s", want, ex.Request)
		}
	}
	if !strings.HasPrefix(ex.Response, "HTTP/1.1 500 Internal Server Error\n") || !strings.Contains(ex.Response, "X-Served-By: edge-1\n") ||
		!strings.HasSuffix(ex.Response, "\n\ndatabase is down\n") {
		t.Errorf("the answer received:\n%s", ex.Response)
	}

	_, ex, err = c.Trace(context.Background(), srv.URL+"/big", scope, req)
	callErr(t, err)
	body := ex.Response[strings.Index(ex.Response, "\n\n")+2:]
	// 11 bytes of prefix and 10,000 of é: cut at 4,095 (4,096 is inside
	// an é), 5,916 left out, counted as the whole reply was read.
	if !strings.HasPrefix(body, `{"result":"éé`) || !strings.HasSuffix(body, "\n… (5916 more bytes)") || !utf8.ValidString(body) {
		t.Errorf("a long answer is cut to %d bytes on a character, with what is left out: %d bytes, ends %q", shownBytes, len(body), body[len(body)-30:])
	}
	// A refused answer is read only as far as it is shown, so what is
	// left is not counted; one that is held is read as far as it came.
	for path, want := range map[string]string{"/big500": strings.Repeat("x", 4096) + "\n… (the rest was not read)",
		"/held500": "partial\n… (the rest was not read)"} {
		_, ex, err = c.Trace(context.Background(), srv.URL+path, scope, req)
		callErr(t, err)
		if !strings.HasSuffix(ex.Response, "\n\n"+want) {
			t.Errorf("%s: the answer received ends %q", path, ex.Response[max(len(ex.Response)-60, 0):])
		}
	}
	// An answer's control characters are not passed on to a terminal.
	_, ex, _ = c.Trace(context.Background(), srv.URL+"/escape", scope, req)
	if !strings.HasSuffix(ex.Response, "\n\n\uFFFD]52;c;cGF3bmVk\uFFFDred\uFFFD[31m\uFFFD line\nnext\ttab") {
		t.Errorf("an answer with escape sequences: %q", ex.Response)
	}
	// The transport asks for gzip and decompresses: both are said.
	_, ex, _ = c.Trace(context.Background(), srv.URL+"/gzip", scope, req)
	if !strings.Contains(ex.Request, "\nAccept-Encoding: gzip\n") || !strings.Contains(ex.Response, "\nContent-Encoding: gzip (the body below is decompressed)\n") ||
		!strings.HasSuffix(ex.Response, "\n\ncompressed error") {
		t.Errorf("a compressed answer:\n%s\n%s", ex.Request, ex.Response)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, ex, err = c.Trace(context.Background(), closed.URL, scope, req)
	if ce := callErr(t, err); !ce.NoResponse || !strings.HasPrefix(ex.Request, "POST / HTTP/1.1\n") || ex.Response != "" {
		t.Errorf("closed port: %+v\n%+v", ce, ex)
	}
}
