// Package dispatch makes the marketplace's calls to creators' services:
// requests signed with the marketplace key, dialled only to public addresses
// (checked on the address actually dialled, so a DNS answer that changes
// between check and dial gains nothing), no redirects, capped replies.
package dispatch

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/webhook"
)

// Options configure a Caller.
type Options struct {
	// Signer signs every request (X-Crtx-Signature).
	Signer ed25519.PrivateKey
	// AllowPrivate lets endpoints be plain http and reach any address
	// (--allow-private-endpoints, for development and tests).
	AllowPrivate bool
	// LookupIP resolves host names; nil uses the system resolver.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// MaxReplyBytes caps a reply body; 0 means 8 MiB (a 4 MiB result, JSON-escaped).
	MaxReplyBytes int64
	Now           func() time.Time
}

// Caller calls creators' services. It implements crtx.Caller.
type Caller struct {
	opts   Options
	client *http.Client
}

var _ crtx.Caller = (*Caller)(nil)

// ErrBlocked is wrapped when an address is refused.
var ErrBlocked = errors.New("address is not public")

// New returns a Caller.
func New(opts Options) *Caller {
	if opts.LookupIP == nil {
		opts.LookupIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if opts.MaxReplyBytes == 0 {
		opts.MaxReplyBytes = 8 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Caller{opts: opts}
	transport := &http.Transport{
		Proxy:                  nil, // never through a proxy: it would dial for us, unchecked
		DialContext:            c.dial,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		// Each call in flight holds its connection's two buffers (4 KiB
		// each by default) for the whole call, thousands at once with
		// agents that take seconds. A call writes a small request and
		// reads one result; smaller buffers cost a few more reads of a
		// large result, bound a chunked reply's trailer (which the
		// protocol does not use) to 2 KiB, and save 5 KiB a call
		// (docs/performance.md).
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  2 << 10,
		// A busy agent gets many concurrent calls; keeping their connections
		// saves a TCP handshake (and a TLS one) per call.
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	c.client = &http.Client{
		Transport: transport,
		// A redirect is answered as it is and then refused by the status check.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// control runs on the socket right before connect: the address here is
// the one really dialled.
func (c *Caller) control(network, address string, _ syscall.RawConn) error {
	if c.opts.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrBlocked)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("dial %s: %w", ap.Addr(), ErrBlocked)
	}
	return nil
}

// dial resolves the host itself and dials each address in turn through a
// dialer whose Control refuses private addresses.
func (c *Caller) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: c.control}
	ips, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var first error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

func (c *Caller) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := c.opts.LookupIP(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return ips, nil
}

// CheckURL checks an endpoint or webhook URL before it is stored: https (or
// http with AllowPrivate), no user info, a host, and — unless AllowPrivate —
// only public addresses, as a literal or as what the name resolves to now.
func (c *Caller) CheckURL(ctx context.Context, field, raw string) error {
	bad := func(format string, args ...any) error {
		return crtx.Errorf(crtx.CodeInvalidRequest, "%s: "+format, append([]any{field}, args...)...)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return bad("must be an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && c.opts.AllowPrivate:
	case u.Scheme == "http":
		return bad("must use https (plain http only with --allow-private-endpoints)")
	default:
		return bad("scheme %q is not supported; use https", u.Scheme)
	}
	if u.User != nil {
		return bad("must not carry a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return bad("has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad("port %q is not valid", p)
		}
	}
	if c.opts.AllowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !Public(ip) {
			return bad("%s is not a public address", ip)
		}
		return nil
	}
	// One answer, which names neither the addresses a name resolves to nor
	// the resolver, for a name that does not resolve and one that resolves
	// to a private address: telling them apart would let a caller map the
	// marketplace's internal names through webhook_url for free.
	ips, err := c.resolve(ctx, host)
	public := err == nil
	for _, ip := range ips {
		public = public && Public(ip)
	}
	if !public {
		return crtx.Errorf(crtx.CodeEndpointUnreachable, "%s: %s does not resolve to a public address", field, host)
	}
	return nil
}

// post is a POST of a JSON body with the marketplace's common headers, and
// the timestamp it carries, for the caller to sign.
func (c *Caller) post(ctx context.Context, url string, env crtx.Environment, body []byte) (*http.Request, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	ts := strconv.FormatInt(c.opts.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "crtx-marketplace/1")
	req.Header.Set(crtx.HeaderEnvironment, string(env))
	req.Header.Set(crtx.HeaderTimestamp, ts)
	return req, ts, nil
}

// Call POSTs req to endpoint, signed for scope as the creator protocol has
// it (docs/creators.md), and returns the decoded reply. The
// deadline is ctx's. It does not judge the reply's content (crtx.CheckReply
// does); it fails only when there is no JSON object to judge.
func (c *Caller) Call(ctx context.Context, endpoint string, scope crtx.RequestScope, req crtx.CreatorRequest, deltas func(string)) (crtx.CreatorReply, error) {
	return c.call(ctx, endpoint, scope, req, deltas, nil)
}

// Trace is Call that also records the exchange.
func (c *Caller) Trace(ctx context.Context, endpoint string, scope crtx.RequestScope, req crtx.CreatorRequest) (crtx.CreatorReply, crtx.Exchange, error) {
	var ex crtx.Exchange
	reply, err := c.call(ctx, endpoint, scope, req, nil, &ex)
	return reply, ex, err
}

// call is Call, writing the exchange into ex when it is not nil.
func (c *Caller) call(ctx context.Context, endpoint string, scope crtx.RequestScope, req crtx.CreatorRequest, deltas func(string), ex *crtx.Exchange) (crtx.CreatorReply, error) {
	var reply crtx.CreatorReply
	body, err := json.Marshal(req)
	if err != nil {
		return reply, err
	}
	hreq, ts, err := c.post(ctx, endpoint, scope.Environment, body)
	if err != nil {
		return reply, &crtx.CallError{Code: crtx.CodeEndpointUnreachable, NoResponse: true, Message: "the endpoint URL is not valid", Err: err}
	}
	if scope.AgentID != "" {
		hreq.Header.Set(crtx.HeaderAgentID, scope.AgentID)
	}
	hreq.Header.Set(crtx.HeaderSigningKey, scope.SigningKey)
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	if scope.Test {
		hreq.Header.Set(crtx.HeaderTest, "true")
	}
	hreq.Header.Set(crtx.HeaderSignature, crtx.RequestSignature(c.opts.Signer, scope, ts, body))
	if ex != nil {
		ex.Request = sent(hreq, body)
	}
	resp, err := c.client.Do(hreq)
	if err != nil {
		redactURL(err)
		if ctx.Err() != nil {
			return reply, &crtx.CallError{Code: crtx.CodeExecutionTimeout, Message: "no reply before the deadline", Err: fmt.Errorf("no reply before the deadline: %w", err)}
		}
		msg := "the agent's service could not be reached"
		if errors.Is(err, ErrBlocked) {
			msg = "the endpoint resolved to an address that is not public"
		} else if why := unreachable(err); why != "" {
			msg += ": " + why
		}
		return reply, &crtx.CallError{Code: crtx.CodeEndpointUnreachable, NoResponse: true, Message: msg, Err: err}
	}
	defer resp.Body.Close()
	var got []byte // the body as far as it was read, for ex
	whole := false // and whether that was all of it
	if ex != nil {
		defer func() { ex.Response = received(resp, got, whole) }()
	}
	if resp.StatusCode != http.StatusOK {
		if ex != nil {
			// Read only for the record: a refused answer's body is not
			// judged, and an answer that trickles does not hold the test.
			stop := time.AfterFunc(recordWait, func() { resp.Body.Close() })
			var err error
			got, err = io.ReadAll(io.LimitReader(resp.Body, shownBytes+1))
			stop.Stop()
			whole = err == nil && len(got) <= shownBytes
		}
		msg := fmt.Sprintf("the endpoint answered HTTP %d", resp.StatusCode)
		if resp.Header.Get("Location") != "" {
			msg += " with a redirect, which is not followed"
		}
		return reply, &crtx.CallError{Code: crtx.CodeInvalidAgentResponse, Message: msg,
			Err: fmt.Errorf("%s: HTTP %d, Location %q", redacted(endpoint), resp.StatusCode, redacted(resp.Header.Get("Location")))}
	}
	if streamed(resp.Header.Get("Content-Type")) {
		var body io.Reader = resp.Body
		var seen bytes.Buffer
		if ex != nil {
			body = io.TeeReader(body, &seen)
			defer func() { got, whole = seen.Bytes(), true }()
		}
		return c.stream(ctx, body, deltas)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxReplyBytes+1))
	got, whole = data, err == nil && int64(len(data)) <= c.opts.MaxReplyBytes
	if err != nil {
		if ctx.Err() != nil {
			return reply, &crtx.CallError{Code: crtx.CodeExecutionTimeout, Message: "the reply did not finish before the deadline",
				Err: fmt.Errorf("the reply did not finish before the deadline: %w", err)}
		}
		return reply, &crtx.CallError{Code: crtx.CodeInvalidAgentResponse, Message: "the reply could not be read", Err: fmt.Errorf("reading the reply: %w", err)}
	}
	if int64(len(data)) > c.opts.MaxReplyBytes {
		msg := fmt.Sprintf("the reply is larger than %d bytes", c.opts.MaxReplyBytes)
		return reply, &crtx.CallError{Code: crtx.CodeInvalidAgentResponse, Message: msg, Err: errors.New(msg)}
	}
	if err := json.Unmarshal(data, &reply); err != nil {
		return reply, &crtx.CallError{Code: crtx.CodeInvalidAgentResponse, Message: "the reply is not a JSON object of the creator protocol",
			Err: fmt.Errorf("the reply is not a JSON object of the creator protocol: %w", err)}
	}
	return reply, nil
}

// Deliver POSTs a webhook body signed over "<timestamp>.<body>"
// (X-Crtx-Signature) and, for the receivers' existing libraries, by the
// Standard Webhooks scheme over "id.timestamp.body" (webhook-id,
// webhook-timestamp, webhook-signature): "v1,…" with each of the wallet's
// secrets, the symmetric scheme svix and standardwebhooks verify, and
// "v1a,…" with the marketplace's Ed25519 key, space-separated as the
// scheme lists several signatures. It goes through the same address
// checks, and returns the HTTP status.
func (c *Caller) Deliver(ctx context.Context, url, id string, env crtx.Environment, body []byte, secrets [][]byte, headers map[string]string) (int, error) {
	req, ts, err := c.post(ctx, url, env, body)
	if err != nil {
		return 0, err
	}
	for k, v := range headers {
		if req.Header.Get(k) == "" { // the marketplace's own headers stay its own
			req.Header.Set(k, v)
		}
	}
	req.Header.Set(crtx.HeaderSignature, crtx.TimestampSignature(c.opts.Signer, ts, body))
	req.Header.Set(webhook.HeaderID, id)
	req.Header.Set(webhook.HeaderTimestamp, ts)
	sigs := make([]string, 0, len(secrets)+1)
	for _, k := range secrets {
		sigs = append(sigs, webhook.HMAC(k, id, ts, body))
	}
	sigs = append(sigs, webhook.Signature(c.opts.Signer, id, ts, body))
	req.Header.Set(webhook.HeaderSignature, strings.Join(sigs, " "))
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Fetch GETs url with the same address checks and no redirect, and
// returns its body if it answered 200 within max bytes.
func (c *Caller) Fetch(ctx context.Context, url string, max int64) ([]byte, error) {
	if err := c.CheckURL(ctx, "url", url); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "crtx-marketplace/1")
	resp, err := c.client.Do(req)
	if err != nil {
		redactURL(err)
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", redacted(url), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err == nil && int64(len(body)) > max {
		err = fmt.Errorf("GET %s: more than %d bytes", redacted(url), max)
	}
	return body, err
}

// redactURL drops the query and user info from the URL an error of
// net/http names: the detail goes to the log, and a creator's endpoint may
// carry a secret in its query.
func redactURL(err error) {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redacted(ue.URL)
	}
}

func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.User, u.Fragment = nil, ""
	return u.String()
}
