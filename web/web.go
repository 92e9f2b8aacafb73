// Package web serves every page of the marketplace: the catalog and agent
// pages (readable without JavaScript), wallet sign-in in the browser, the
// user, API key, creator and operator dashboards, the ledger explorer and
// the API reference at /docs. Pages are rendered on the server from
// html/template, in one layout, with assets embedded in the binary.
package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	pathpkg "path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
	"github.com/crtx-market/crtx/market"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

const (
	sessionCookie = "crtx_session"
	adminCookie   = "crtx_admin"
)

// Handler serves the pages.
type Handler struct {
	market     *market.Market
	adminToken *gate.Secret
	checkAdmin func(*http.Request, string) error
	nonce      func(context.Context, string) (crtx.ListingNonce, error)
	log        *slog.Logger
	secure     bool // cookies only over https
	pages      map[string]*template.Template
	docsPage   page // the /docs page's content, rendered once from the OpenAPI document
}

// Options configure the pages.
type Options struct {
	// AdminToken enables the operator pages; nil or empty turns them off.
	// A new one (SIGHUP) ends the operator sessions opened with the old.
	AdminToken *gate.Secret
	// CheckAdminToken admits a token given on the operator's sign-in page
	// as the admin token, or refuses it; the REST server's, so that a
	// guess here counts against the same budget (required with
	// AdminToken).
	CheckAdminToken func(r *http.Request, token string) error
	// ListingNonce issues a wallet a nonce for its listing form; the REST
	// server's, so that the pages and the API share one limit (required).
	ListingNonce func(ctx context.Context, wallet string) (crtx.ListingNonce, error)
	// OpenAPI is the REST interface's document, which /docs renders.
	OpenAPI []byte
	// Logger takes the internal errors of pages; nil discards them.
	Logger *slog.Logger
}

// Route is one page or form handler.
type Route struct {
	Method, Path string
	Handle       func(w http.ResponseWriter, r *http.Request) error
}

// pct is a fraction as a percentage, to a tenth where it has one.
func pct(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f*100, 'f', 1, 64), ".0") + "%"
}

// funcs are the helpers every template may call.
func funcs() template.FuncMap {
	return template.FuncMap{
		"pct": pct,
		// latency is a typical time of completed runs: "—" without one,
		// and a time under a millisecond is not said to be none.
		"latency": func(ms int64, successRate float64) string {
			switch {
			case successRate == 0:
				return "—"
			case ms < 1:
				return "< 1 ms"
			}
			return strconv.FormatInt(ms, 10) + " ms"
		},
		// share is part of whole as a percentage ("—" of nothing).
		"share": func(part, whole int64) string {
			if whole <= 0 {
				return "—"
			}
			return pct(float64(part) / float64(whole))
		},
		"join": strings.Join,
		// short names a wallet as a creator is named by default.
		"short": crtx.DefaultDisplayName,
		"time":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"ptime": func(t *time.Time) string {
			if t == nil {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		// fe is what a form's field name is told of its fault, with the id
		// of the words, for the field to name them (aria-describedby).
		"fe": func(fields map[string]string, name string) fieldError {
			return fieldError{ID: "err-" + strings.NewReplacer(".", "-", " ", "-").Replace(name), Message: fields[name]}
		},
		"price": priceText,
		// sentence is an error's words as a sentence: capitalised, with
		// a full stop.
		"sentence": func(s string) string {
			if s == "" {
				return s
			}
			r, n := utf8.DecodeRuneInString(s)
			s = string(unicode.ToUpper(r)) + s[n:]
			if !strings.HasSuffix(s, ".") {
				s += "."
			}
			return s
		},
		"reason":   reasonLabel,
		"ago":      ago,
		"envs":     func() []crtx.Environment { return crtx.Environments },
		"evidence": evidenceFields,
		"deref": func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		},
		// words writes a status as a person reads it: awaiting_payment as
		// "awaiting payment".
		"words": func(s any) string { return strings.ReplaceAll(fmt.Sprint(s), "_", " ") },
		"add":   func(a, b int) int { return a + b },
		"sub":   func(a, b int) int { return a - b },
		// prettyText lays out a result that is JSON; other text stays as it is.
		"prettyText": func(s string) string {
			var b bytes.Buffer
			if json.Indent(&b, []byte(s), "", "  ") != nil {
				return s
			}
			return b.String()
		},
		"pretty": func(raw []byte) string {
			var b bytes.Buffer
			if err := json.Indent(&b, raw, "", "  "); err != nil {
				return string(raw)
			}
			return b.String()
		},
	}
}

// parsePage parses a page's template in the site's one layout, whose
// navigation marks the page's section as the current one.
func parsePage(name string) *template.Template {
	files := []string{"templates/layout.html", "templates/" + name + ".html"}
	if strings.HasPrefix(name, "explorer-") {
		files = append(files, "templates/explorer-parts.html")
	}
	current := func(s string) template.HTMLAttr {
		if s == siteSection(name) {
			return ` aria-current="page"`
		}
		return ""
	}
	return template.Must(template.New("").Funcs(funcs()).Funcs(template.FuncMap{"current": current}).ParseFS(templateFS, files...))
}

// priceText is what a call of an agent (a listing as the API serves it,
// or as stored) costs, in words: its price, or a metered listing's three
// prices.
func priceText(a interface {
	Metered() (crtx.Metered, bool)
	Hold() crtx.USDC
}) string {
	if m, ok := a.Metered(); ok {
		return m.String()
	}
	return a.Hold().String() + " USDC a call"
}

// siteSection names the part of the site a page belongs to, as the header's
// navigation calls it; an error page belongs to none.
func siteSection(page string) string {
	switch page {
	case "home", "agent":
		return "agents"
	case "docs", "dashboard", "keys", "creator", "operator", "login":
		return page
	case "execution", "deposit", "withdraw":
		return "dashboard"
	case "edit":
		return "creator"
	case "operator-login":
		return "operator"
	case "reserves":
		return "explorer"
	}
	if strings.HasPrefix(page, "explorer-") {
		return "explorer"
	}
	return ""
}

// New returns the pages of market.
func New(market *market.Market, opts Options) (*Handler, error) {
	if opts.AdminToken.Get() != "" && opts.CheckAdminToken == nil {
		return nil, errors.New("web: the operator pages need CheckAdminToken")
	}
	if opts.ListingNonce == nil {
		return nil, errors.New("web: the creator pages need ListingNonce")
	}
	h := &Handler{market: market, adminToken: opts.AdminToken, checkAdmin: opts.CheckAdminToken, nonce: opts.ListingNonce, secure: strings.HasPrefix(market.Config().PublicURL, "https://"),
		pages: map[string]*template.Template{}, log: opts.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for _, p := range []string{"home", "agent", "login", "authorize", "dashboard", "execution", "deposit", "keys", "creator", "edit", "operator", "operator-login",
		"docs", "error", "withdraw", "explorer-home", "explorer-account", "explorer-tx", "explorer-block", "reserves"} {
		h.pages[p] = parsePage(p)
	}
	var err error
	if h.docsPage, err = h.buildDocs(opts.OpenAPI, market.Config().PublicURL, market.Config().FeeBps); err != nil {
		return nil, fmt.Errorf("docs: %w", err)
	}
	return h, nil
}

// Routes lists the pages and form handlers.
func (h *Handler) Routes() []Route {
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	routes := []Route{
		{"GET", "/{$}", h.home},
		{"GET", "/agents/{id}", h.agent},
		{"POST", "/agents/{id}/run", h.action(h.session, h.tryAgent)},
		{"GET", "/static/", func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Cache-Control", "public, max-age=3600")
			files.ServeHTTP(w, r)
			return nil
		}},
		{"GET", "/login", h.login},
		{"GET", "/oauth/authorize", h.authorize},
		{"POST", "/oauth/authorize", h.consent},
		{"POST", "/dashboard/login", h.loginToken},
		{"POST", "/dashboard/logout", h.logout},
		{"GET", "/dashboard/{$}", h.signedPage(h.dashboard)},
		{"POST", "/dashboard/airdrop", h.action(h.session, h.airdrop)},
		{"POST", "/dashboard/deposits", h.action(h.session, h.createDeposit)},
		{"GET", "/dashboard/deposits/{id}", h.signedPage(h.deposit)},
		{"GET", "/dashboard/deposits/{id}/status", h.signedPage(h.depositStatus)},
		{"GET", "/dashboard/withdrawals/confirm", h.signedPage(h.confirmWithdrawal)},
		{"POST", "/dashboard/withdrawals", h.action(h.session, h.withdraw)},
		{"GET", "/dashboard/withdrawals/{env}", h.signedPage(h.withdrawalList)},
		{"GET", "/dashboard/executions.csv", h.signedPage(h.historyCSV)},
		{"GET", "/dashboard/executions/{id}", h.signedPage(h.execution)},
		{"GET", "/dashboard/executions/{id}/run", h.signedPage(h.runPanel)},
		{"GET", "/dashboard/executions/{id}/pieces", h.signedPage(h.runPieces)},
		{"GET", "/dashboard/executions/{id}/receipt.json", h.signedPage(h.receiptFile)},
		{"POST", "/dashboard/executions/{id}/dispute", h.action(h.session, h.reportProblem)},
		{"POST", "/dashboard/executions/{id}/cancel", h.action(h.session, h.cancelRun)},
		{"GET", "/dashboard/keys", h.signedPage(h.keys)},
		{"POST", "/dashboard/keys", h.action(h.session, h.createKey)},
		{"POST", "/dashboard/keys/{id}/revoke", h.action(h.session, h.revokeKey)},
		{"POST", "/dashboard/keys/webhook-secret", h.action(h.session, h.rotateWebhookSecret)},
		{"GET", "/dashboard/creator", h.signedPage(h.creator)},
		{"POST", "/dashboard/creator/agents", h.action(h.session, h.createListing)},
		{"GET", "/dashboard/creator/agents/{id}/edit", h.signedPage(h.editListing)},
		{"POST", "/dashboard/creator/agents/{id}/edit", h.action(h.session, h.saveListing)},
		{"POST", "/dashboard/creator/agents/{id}/{action}", h.action(h.session, h.listingAction)},
		{"POST", "/dashboard/creator/test", h.action(h.session, h.testTool)},
		{"POST", "/dashboard/creator/disputes/{id}", h.action(h.session, h.answerDispute)},
		{"GET", "/dashboard/operator", h.operator},
		{"POST", "/dashboard/operator/login", h.operatorLogin},
		{"POST", "/dashboard/operator/logout", h.operatorLogout},
		{"POST", "/dashboard/operator/disputes/{id}", h.action(h.operatorVisit, h.resolve)},
		{"POST", "/dashboard/operator/creators", h.action(h.operatorVisit, h.verifyCreator)},

		{"GET", "/docs", h.docs},
		{"GET", "/explorer/{$}", h.explorerHome},
		{"GET", "/explorer/account/{address}", explorerRead(h, "explorer-account", "address",
			func(crtx.AccountHistory) string { return "Account" }, h.market.Ledger.Account)},
		{"GET", "/explorer/tx/{id}", h.explorerTx},
		{"GET", "/explorer/block/{height}", h.explorerBlock},
		{"GET", "/explorer/search", h.explorerSearch},
		{"GET", "/reserves", h.reserves},
	}
	routes = append(routes, formLandings(routes)...)
	for i, r := range routes {
		routes[i].Handle = h.human(r.Handle)
		if strings.HasPrefix(r.Path, "/dashboard/") || r.Path == "/login" || strings.HasPrefix(r.Path, "/oauth/") {
			routes[i].Handle = private(routes[i].Handle)
		}
	}
	return routes
}

// formLandings answers a GET of a form's action (a reload after the post,
// a bookmark, a pasted address) with the page the form lives on, rather
// than 405 in JSON.
func formLandings(routes []Route) []Route {
	gets := map[string]bool{}
	for _, r := range routes {
		if r.Method == "GET" {
			gets[r.Path] = true
		}
	}
	var out []Route
	for _, r := range routes {
		if r.Method != "POST" || gets[r.Path] {
			continue
		}
		out = append(out, Route{"GET", r.Path, func(w http.ResponseWriter, r *http.Request) error {
			http.Redirect(w, r, formPage(r.URL.Path), http.StatusSeeOther)
			return nil
		}})
	}
	return out
}

// formPage is the page of the form whose action is path: a dashboard's,
// or else the page one level up (an agent's for /agents/{id}/run).
func formPage(path string) string {
	if !strings.HasPrefix(path, "/dashboard/") {
		return pathpkg.Dir(path)
	}
	for _, p := range []struct{ prefix, page string }{{"/dashboard/login", "/login"}, {"/dashboard/logout", "/login"},
		{"/dashboard/keys", "/dashboard/keys"}, {"/dashboard/creator", "/dashboard/creator"}, {"/dashboard/operator", "/dashboard/operator"}} {
		if strings.HasPrefix(path, p.prefix) {
			return p.page
		}
	}
	return "/dashboard/"
}

// private keeps a page that shows a wallet's own state (balances, keys,
// listings) out of every cache, the browser's back-forward history
// included: after sign-out, Back must not show it again.
func private(next func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "no-store")
		return next(w, r)
	}
}

// PageCSP is the Content-Security-Policy of every HTML page: its own
// scripts and styles only, never in a frame, forms posting only to itself.
const PageCSP = pageSources + "; form-action 'self'"

// pageSources is PageCSP but where forms may go: a page whose form leads
// elsewhere (the OAuth consent) adds that destination.
const pageSources = "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"

// fieldError is a form field's fault as a page shows it.
type fieldError struct{ ID, Message string }

// page is what every template gets.
type page struct {
	Title string
	// Description is the page's meta description; empty, the site's.
	Description string
	Wallet      string
	Error       string
	Notice      string
	Data        any
	key         formKey
	at          time.Time
}

// Operator says the page is shown to the signed-in operator.
func (p page) Operator() bool { return p.Wallet == "" && p.key != "" }

// personal says the page is shown to someone signed in.
func (p page) personal() bool { return p.key != "" }

// CSRF is a new one-time token for one of the page's forms.
func (p page) CSRF() string { return p.key.token(p.at) }

// render writes a page: into a buffer first, so that a template failure
// still answers with a clean error body.
func (h *Handler) render(w http.ResponseWriter, name string, data any) error {
	return h.renderStatus(w, http.StatusOK, name, data)
}

func (h *Handler) renderStatus(w http.ResponseWriter, status int, name string, data any) error {
	b, err := h.execute(name, data)
	if err != nil {
		return err
	}
	// A public page under a signed-in header is that visitor's alone: no
	// shared cache may keep it (pages of a wallet's state say no-store).
	if p, ok := data.(interface{ personal() bool }); ok && p.personal() && w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "private")
	}
	writePage(w, status, b)
	return nil
}

func writePage(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", PageCSP)
	w.WriteHeader(status)
	w.Write(b)
}

func (h *Handler) execute(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	err := h.pages[name].ExecuteTemplate(&buf, name+".html", data)
	return buf.Bytes(), err
}

var (
	errSignIn         = errors.New("sign in first")
	errOperatorSignIn = errors.New("sign in as the operator first")
)

// session returns the signed-in wallet, or errSignIn.
func (h *Handler) session(r *http.Request) (visit, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return visit{}, errSignIn
	}
	p, err := h.market.Accounts.Authenticate(r.Context(), c.Value)
	if err != nil || p.Key != nil {
		return visit{}, errSignIn
	}
	return visit{Wallet: p.Wallet, key: formKey(c.Value), at: h.market.Now()}, nil
}

// visitor is whoever looks at a public page: the signed-in wallet, else
// the signed-in operator, else a visitor without a session.
func (h *Handler) visitor(r *http.Request) visit {
	if v, err := h.session(r); err == nil {
		return v
	}
	if v, err := h.operatorVisit(r); err == nil {
		return v
	}
	return visit{}
}

// signedPage serves a page of the signed-in wallet; a visitor without a
// session gets the sign-in page, which sends them back here after.
func (h *Handler) signedPage(page func(http.ResponseWriter, *http.Request, visit) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := h.session(r)
		if err != nil {
			return h.signedIn(w, r, err)
		}
		return page(w, r, v)
	}
}

// signedIn answers a page or form of a visitor whose session is missing or
// has ended: with the sign-in page, which sends them back here after.
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request, err error) error {
	switch {
	case errors.Is(err, errSignIn):
		to := "/login?next=" + url.QueryEscape(r.URL.Path)
		if r.Method == http.MethodPost {
			to += "&ended=1"
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return nil
	case errors.Is(err, errOperatorSignIn):
		http.Redirect(w, r, "/dashboard/operator?ended=1", http.StatusSeeOther)
		return nil
	}
	return err
}

func (h *Handler) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteStrictMode})
}

// message is what a page says about an error of a form: the API's words.
func message(err error) string { return crtx.ErrorMessage(err) }

// isUserError reports an error the person can act on (anything but internal).
func isUserError(err error) bool {
	var e *crtx.Error
	return errors.As(err, &e)
}
