// Package web serves every page of the marketplace: the catalog and agent
// pages (readable without JavaScript), wallet sign-in in the browser, the
// user, API key, creator and operator dashboards, the ledger explorer and
// the API reference at /docs. Pages are rendered on the server from
// html/template, in one layout, with assets embedded in the binary.
package web

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
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
	adminToken string
	secure     bool // cookies only over https
	pages      map[string]*template.Template
	docsHTML   []byte // the /docs page, rendered once from the OpenAPI document
}

// Options configure the pages.
type Options struct {
	// AdminToken enables the operator pages; empty turns them off.
	AdminToken string
	// OpenAPI is the REST interface's document, which /docs renders.
	OpenAPI []byte
}

// Route is one page or form handler.
type Route struct {
	Method, Path string
	Handle       func(w http.ResponseWriter, r *http.Request) error
}

// funcs are the helpers every template may call.
func funcs() template.FuncMap {
	return template.FuncMap{
		"pct": func(f float64) string {
			return strings.TrimSuffix(strconv.FormatFloat(f*100, 'f', 1, 64), ".0") + "%"
		},
		"join": strings.Join,
		"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"ptime": func(t *time.Time) string {
			if t == nil {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"deref": func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		},
		"add": func(a, b int) int { return a + b },
		"sub": func(a, b int) int { return a - b },
		"pretty": func(raw []byte) string {
			var b bytes.Buffer
			if err := json.Indent(&b, raw, "", "  "); err != nil {
				return string(raw)
			}
			return b.String()
		},
	}
}

// parsePage parses a page's template in the site's one layout.
func parsePage(name string) *template.Template {
	files := []string{"templates/layout.html", "templates/" + name + ".html"}
	if strings.HasPrefix(name, "explorer-") {
		files = append(files, "templates/explorer-parts.html")
	}
	return template.Must(template.New("").Funcs(funcs()).ParseFS(templateFS, files...))
}

// New returns the pages of market.
func New(market *market.Market, opts Options) (*Handler, error) {
	h := &Handler{market: market, adminToken: opts.AdminToken, secure: strings.HasPrefix(market.Config().PublicURL, "https://"),
		pages: map[string]*template.Template{}}
	for _, p := range []string{"home", "agent", "login", "dashboard", "execution", "keys", "creator", "edit", "operator", "operator-login",
		"docs", "explorer-home", "explorer-account", "explorer-tx", "explorer-block"} {
		h.pages[p] = parsePage(p)
	}
	var err error
	if h.docsHTML, err = h.buildDocs(opts.OpenAPI, market.Config().PublicURL); err != nil {
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
		{"GET", "/static/", func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Cache-Control", "public, max-age=3600")
			files.ServeHTTP(w, r)
			return nil
		}},
		{"GET", "/login", h.login},
		{"POST", "/dashboard/login", h.loginToken},
		{"POST", "/dashboard/logout", h.logout},
		{"GET", "/dashboard/{$}", h.dashboard},
		{"POST", "/dashboard/airdrop", h.airdrop},
		{"GET", "/dashboard/executions/{id}", h.execution},
		{"GET", "/dashboard/keys", h.keys},
		{"POST", "/dashboard/keys", h.createKey},
		{"POST", "/dashboard/keys/{id}/revoke", h.revokeKey},
		{"GET", "/dashboard/creator", h.creator},
		{"POST", "/dashboard/creator/agents", h.createListing},
		{"GET", "/dashboard/creator/agents/{id}/edit", h.editListing},
		{"POST", "/dashboard/creator/agents/{id}/edit", h.saveListing},
		{"POST", "/dashboard/creator/agents/{id}/{action}", h.listingAction},
		{"POST", "/dashboard/creator/test", h.testTool},
		{"POST", "/dashboard/creator/disputes/{id}", h.answerDispute},
		{"GET", "/dashboard/operator", h.operator},
		{"POST", "/dashboard/operator/login", h.operatorLogin},
		{"POST", "/dashboard/operator/logout", h.operatorLogout},
		{"POST", "/dashboard/operator/disputes/{id}", h.resolve},
		{"POST", "/dashboard/operator/creators", h.verifyCreator},

		{"GET", "/docs", h.docs},
		{"GET", "/explorer/{$}", h.explorerHome},
		{"GET", "/explorer/account/{address}", explorerRead(h, "explorer-account", "address",
			func(api.AccountView) string { return "Account" }, h.market.Account)},
		{"GET", "/explorer/tx/{id}", explorerRead(h, "explorer-tx", "id",
			func(t crtx.LedgerTx) string { return "Transaction " + string(t.Kind) }, h.market.Transaction)},
		{"GET", "/explorer/block/{height}", h.explorerBlock},
	}
	routes = append(routes, formLandings(routes)...)
	for i, r := range routes {
		if strings.HasPrefix(r.Path, "/dashboard/") || r.Path == "/login" {
			routes[i].Handle = private(r.Handle)
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
		landing := "/dashboard/"
		for _, p := range []struct{ prefix, page string }{{"/dashboard/login", "/login"}, {"/dashboard/logout", "/login"},
			{"/dashboard/keys", "/dashboard/keys"}, {"/dashboard/creator", "/dashboard/creator"}, {"/dashboard/operator", "/dashboard/operator"}} {
			if strings.HasPrefix(r.Path, p.prefix) {
				landing = p.page
				break
			}
		}
		out = append(out, Route{"GET", r.Path, func(w http.ResponseWriter, r *http.Request) error {
			http.Redirect(w, r, landing, http.StatusSeeOther)
			return nil
		}})
	}
	return out
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
const PageCSP = "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// page is what every template gets.
type page struct {
	Title string
	// Description is the page's meta description; empty, the site's.
	Description string
	Wallet      string
	CSRF        string
	Error       string
	Notice      string
	Data        any
	// NoScript leaves the site's script out: the page works without it.
	NoScript bool
}

// render writes a page: into a buffer first, so that a template failure
// still answers with a clean error body.
func (h *Handler) render(w http.ResponseWriter, name string, data any) error {
	b, err := h.execute(name, data)
	if err != nil {
		return err
	}
	writePage(w, b)
	return nil
}

func writePage(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", PageCSP)
	w.Write(b)
}

func (h *Handler) execute(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	err := h.pages[name].ExecuteTemplate(&buf, name+".html", data)
	return buf.Bytes(), err
}

// csrfFor ties a form to the session it was served in: the session cookie
// is SameSite, and the form carries a value derived from the token that a
// page of another origin cannot know.
func csrfFor(token string) string {
	sum := sha256.Sum256([]byte("crtx-csrf:" + token))
	return hex.EncodeToString(sum[:16])
}

var errSignIn = errors.New("sign in first")

// session returns the signed-in wallet, or errSignIn.
func (h *Handler) session(r *http.Request) (string, string, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", "", errSignIn
	}
	p, err := h.market.Authenticate(r.Context(), c.Value)
	if err != nil || p.Key != nil {
		return "", "", errSignIn
	}
	return p.Wallet, csrfFor(c.Value), nil
}

// form checks a POST's CSRF value and returns the signed-in wallet.
func (h *Handler) form(r *http.Request) (string, string, error) {
	wallet, csrf, err := h.session(r)
	if err != nil {
		return "", "", err
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(csrf)) != 1 {
		return "", "", crtx.Errorf(crtx.CodeInvalidSession, "the form is stale or from another site; reload the page")
	}
	return wallet, csrf, nil
}

// signedIn wraps a dashboard handler: visitors without a session go to the
// sign-in page.
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request, err error) error {
	if errors.Is(err, errSignIn) {
		http.Redirect(w, r, "/login?next="+r.URL.Path, http.StatusSeeOther)
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
