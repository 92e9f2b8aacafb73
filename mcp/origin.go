package mcp

import (
	"net"
	"net/http"
	"net/url"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
)

// checkOrigin refuses, 403, a request whose Origin header names a site
// other than the marketplace itself or the caller's own machine: Streamable
// HTTP requires it of servers against DNS rebinding ("If the Origin header
// is present and invalid, servers MUST respond with HTTP 403 Forbidden",
// transports, 2025-11-25 and 2026-07-28). MCP clients that are programs
// send no Origin; a page in a browser does, and one served from elsewhere
// must not reach the endpoint through the visitor's network. Loopback
// origins stay allowed: they are the developer's own tools (the MCP
// Inspector's page). The Host header is not checked as the SDK would:
// behind a reverse proxy every request reaches a loopback socket with the
// public host, and /mcp takes no ambient credential a rebinding page could
// borrow.
func checkOrigin(public string, g *gate.Gate, next http.Handler) http.Handler {
	own := ""
	if u, err := url.Parse(public); err == nil {
		own = u.Scheme + "://" + u.Host
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && o != own && !loopback(o) {
			g.Refuse(w, r, crtx.Errorf(crtx.CodeForbiddenOrigin,
				"a page of %s may not call this MCP endpoint; MCP clients send no Origin header", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopback tells an origin on this machine.
func loopback(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
