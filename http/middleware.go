package http

import (
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
)

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestID is what a request id from a trusted proxy may be: enough for
// HAProxy's unique-id-format or a UUID, and nothing a log line could be
// forged with.
var requestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// probe says route is a health or readiness check's.
func probe(route string) bool { return route == "GET /healthz" || route == "GET /readyz" }

// serve gives every request an id, a body limit, panic recovery, metrics and
// a log line, and answers unknown routes and methods with the error body.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	r = s.proxies.Forwarded(r)
	id := "req_" + crtx.RandomBase62(20)
	// A trusted proxy's request id is kept, so that its log and crtxd's
	// name a request alike: one value alone, which the proxy set, since a
	// proxy that appends leaves the client's own first.
	if given := r.Header.Values("X-Request-Id"); gate.FromProxy(r) && len(given) == 1 && requestID.MatchString(given[0]) {
		id = given[0]
	}
	w.Header().Set("X-Request-Id", id)
	r = gate.WithRequestID(r, id)
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	sw := &statusWriter{ResponseWriter: w}

	// Handler only reports the pattern; ServeHTTP must dispatch, since it is
	// what sets the path values.
	var h http.Handler = s.mux
	_, route := s.mux.Handler(r)
	if route == "" {
		route = "unmatched"
		h = http.HandlerFunc(s.noRoute)
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
			if sw.status == 0 {
				s.writeError(sw, r, crtx.Errorf(crtx.CodeInternal, "internal error; quote request id %s when reporting it", id))
			}
		}
		elapsed := time.Since(start)
		s.metrics.observe(r.Method, route, sw.status, elapsed)
		// The route pattern, not the path: a path can hold a wallet address
		// (an account, a creator), and logs hold no user's wallet. A load
		// balancer's health and readiness checks, every few seconds from
		// each, are logged at debug while they pass: they would otherwise
		// be most of the log.
		level := slog.LevelInfo
		if probe(route) && sw.status < 400 {
			level = slog.LevelDebug
		}
		s.log.Log(r.Context(), level, "request", "request_id", id, "method", r.Method, "route", route,
			"status", sw.status, "duration_ms", elapsed.Milliseconds())
	}()
	// No response is to be sniffed into another type or shown in a frame.
	sw.Header().Set("X-Content-Type-Options", "nosniff")
	sw.Header().Set("X-Frame-Options", "DENY")
	if err := textOnly(r); err != nil {
		s.writeError(sw, r, err)
		return
	}
	h.ServeHTTP(sw, r)
}

// textOnly refuses a URL that is not text — invalid UTF-8 or NUL bytes in
// the path or the query — before it can reach a handler or a database that
// stores only text (PostgreSQL refuses both).
func textOnly(r *http.Request) error {
	bad := func(s string) bool { return !crtx.IsText(s) }
	if bad(r.URL.Path) {
		return crtx.Errorf(crtx.CodeInvalidRequest, "the path holds bytes that are not text")
	}
	// Pair by pair as url.ParseQuery reads them, without building the map
	// a handler builds again; unescaping allocates only where there are
	// escapes. A pair that does not unescape is the handler's to refuse.
	for rest := r.URL.RawQuery; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		k, v, _ := strings.Cut(pair, "=")
		for _, s := range []string{k, v} {
			if s, err := url.QueryUnescape(s); err == nil && bad(s) {
				return crtx.Errorf(crtx.CodeInvalidRequest, "the query holds bytes that are not text")
			}
		}
	}
	if bad(r.Header.Get("Idempotency-Key")) {
		return crtx.Errorf(crtx.CodeInvalidRequest, "Idempotency-Key holds bytes that are not text")
	}
	return nil
}

// noRoute answers a request that matched no pattern: 405 when the path
// exists under other methods, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(w, r, crtx.Errorf(crtx.CodeMethodNotAllowed, "%s is not allowed on %s; use %s",
			r.Method, r.URL.Path, strings.Join(allowed, " or ")))
		return
	}
	if s.notFoundPage != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !machinePath(r.URL.Path) {
		s.notFoundPage(w, r)
		return
	}
	s.writeError(w, r, crtx.Errorf(crtx.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
}

// machinePath says a path is one programs call (the REST interface, the
// protocols, the files and metrics), whose wrong addresses are answered
// with the error body; any other is a page's, answered with a page.
func machinePath(p string) bool {
	if len(p) > 2 && p[1] == 'v' && p[2] >= '0' && p[2] <= '9' {
		return true // a version of the REST interface, this one or another
	}
	for _, prefix := range []string{"/v1/", "/mcp", "/a2a/", "/.well-known/", "/oauth/", "/ipfs/", "/discovery/", "/healthz", "/readyz", "/metrics"} {
		if p == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// NotFoundPage answers the GET of a wrong address that is not a program's
// (machinePath) with h: a page for people, in the site's layout.
func (s *Server) NotFoundPage(h http.HandlerFunc) { s.notFoundPage = h }
