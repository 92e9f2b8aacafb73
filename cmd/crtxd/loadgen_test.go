package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The generator asks for gzip, reads compressed and plain answers alike,
// and keeps its connection across both.
func TestLoadClientGzip(t *testing.T) {
	want := strings.Repeat(`{"agent_id":"agt_1"},`, 300)
	var mu sync.Mutex
	peers, asked := map[string]bool{}, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		peers[r.RemoteAddr] = true
		if r.Header.Get("Accept-Encoding") == "gzip" {
			asked++
		}
		mu.Unlock()
		if r.URL.Path == "/plain" || r.Header.Get("Accept-Encoding") != "gzip" {
			w.Write([]byte(want))
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write([]byte(want))
		zw.Close()
	}))
	defer srv.Close()
	lc := newLoadClient()
	for _, path := range []string{"/gz", "/plain", "/gz", "/gz"} {
		var out bytes.Buffer
		status, err := lc.do("GET", srv.URL+path, "", "", &out)
		if err != nil || status != 200 || out.String() != want {
			t.Fatalf("GET %s: %d %v, %d bytes (want %d)", path, status, err, out.Len(), len(want))
		}
	}
	if len(peers) != 1 || asked != 4 {
		t.Fatalf("%d connections for 4 requests (want 1), %d asked for gzip", len(peers), asked)
	}
}
