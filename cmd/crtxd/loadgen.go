package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/sse"
)

// loadClient is the load generator's HTTP/1.1 client: each request is
// written and its answer read by the calling goroutine on a kept
// connection. net/http's Transport hands every request to two goroutines
// of its connection and back; on a machine whose two cores the generator
// shares with the servers it measures, that work (as much CPU as the
// marketplace spends answering a catalog page) was taken from them.
type loadClient struct {
	mu    sync.Mutex
	hosts map[string]chan *loadConn
	// bufs hold answers while they are checked: the generator allocates
	// little, so its garbage collections do not add to the latencies it
	// measures.
	bufs sync.Pool
}

type loadConn struct {
	host string
	c    net.Conn
	br   *bufio.Reader
	req  []byte
	zr   *gzip.Reader // kept for the next compressed answer
}

func newLoadClient() *loadClient {
	return &loadClient{hosts: map[string]chan *loadConn{}, bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// call sends a request, wants the status want, and hands the answer to
// check (when not nil).
func (l *loadClient) call(method, u, key, body string, want int, check func([]byte) error) error {
	buf := l.bufs.Get().(*bytes.Buffer)
	defer l.bufs.Put(buf)
	buf.Reset()
	status, err := l.do(method, u, key, body, buf)
	switch {
	case err != nil:
		return err
	case status != want:
		return fmt.Errorf("status %d: %.200s", status, buf.Bytes())
	case check != nil:
		return check(buf.Bytes())
	}
	return nil
}

// idle returns the kept connections to host.
func (l *loadClient) idle(host string) chan *loadConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, ok := l.hosts[host]
	if !ok {
		ch = make(chan *loadConn, 1024)
		l.hosts[host] = ch
	}
	return ch
}

// reset closes the kept connections, so a scenario starts on fresh ones
// (a server may have closed those idle since the last).
func (l *loadClient) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range l.hosts {
		for len(ch) > 0 {
			(<-ch).c.Close()
		}
	}
}

// do sends the request and reads the answer's body into out; it returns
// the status.
func (l *loadClient) do(method, rawURL, key, body string, out *bytes.Buffer) (int, error) {
	lc, resp, err := l.open(method, rawURL, key, body, "")
	if err != nil {
		return 0, err
	}
	err = lc.readBody(resp, out)
	if err = l.done(lc, resp, err); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// open sends the request on a kept connection to its host, or a new one,
// and reads the answer's head; its body is the caller's to read before
// done.
func (l *loadClient) open(method, rawURL, key, body, accept string) (*loadConn, *http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	var lc *loadConn
	select {
	case lc = <-l.idle(u.Host):
	default:
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			return nil, nil, err
		}
		lc = &loadConn{host: u.Host, c: c, br: bufio.NewReaderSize(c, 16<<10)}
	}
	b := append(lc.req[:0], method...)
	b = append(b, ' ')
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	// Asks for gzip as Go's own client and browsers do, and pays to
	// decompress what comes back compressed.
	b = append(b, "\r\nAccept-Encoding: gzip\r\n"...)
	if accept != "" {
		b = append(b, "Accept: "...)
		b = append(b, accept...)
		b = append(b, "\r\n"...)
	}
	if key != "" {
		b = append(b, "Authorization: Bearer "...)
		b = append(b, key...)
		b = append(b, "\r\n"...)
	}
	if body != "" {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	lc.req = b
	if _, err := lc.c.Write(b); err != nil {
		lc.c.Close()
		return nil, nil, err
	}
	resp, err := http.ReadResponse(lc.br, nil)
	if err != nil {
		lc.c.Close()
		return nil, nil, err
	}
	return lc, resp, nil
}

// done closes the answer's body and keeps its connection for the next
// request, unless reading the body failed (err) or the server closes it.
func (l *loadClient) done(lc *loadConn, resp *http.Response, err error) error {
	resp.Body.Close()
	if err != nil || resp.Close {
		lc.c.Close()
		if err != nil {
			return fmt.Errorf("reading the answer: %w", err)
		}
		return nil
	}
	select {
	case l.idle(lc.host) <- lc:
	default:
		lc.c.Close()
	}
	return nil
}

// readBody reads the answer's body into out, decompressed.
func (lc *loadConn) readBody(resp *http.Response, out *bytes.Buffer) error {
	if resp.Header.Get("Content-Encoding") != "gzip" {
		_, err := out.ReadFrom(resp.Body)
		return err
	}
	var err error
	if lc.zr == nil {
		lc.zr, err = gzip.NewReader(resp.Body)
	} else {
		err = lc.zr.Reset(resp.Body)
	}
	if err != nil {
		return err
	}
	if _, err := out.ReadFrom(lc.zr); err != nil {
		return err
	}
	// The gzip trailer was read with the last block; the body must be
	// at its end, or the connection holds stray bytes.
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// stream sends a request for a streamed answer and reads its events: it
// returns how long the first delta event took to arrive, counted from
// before the request was written, and the name and data of the last
// event.
func (l *loadClient) stream(u, key, body string) (first time.Duration, name string, data []byte, err error) {
	t0 := time.Now()
	lc, resp, err := l.open("POST", u, key, body, "text/event-stream")
	if err != nil {
		return 0, "", nil, err
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		// The rest of the body is unread: the connection is not kept.
		resp.Body.Close()
		lc.c.Close()
		return 0, "", nil, fmt.Errorf("status %d, %s: %s", resp.StatusCode, ct, b)
	}
	r := sse.NewReader(resp.Body, 1<<20)
	for {
		e, rerr := r.Next()
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				rerr = nil
			}
			if rerr == nil && first == 0 {
				rerr = errors.New("no delta event")
			}
			return first, name, data, l.done(lc, resp, rerr)
		}
		if e.Name == crtx.EventDelta && first == 0 {
			first = time.Since(t0)
		}
		name, data = e.Name, e.Data
	}
}
