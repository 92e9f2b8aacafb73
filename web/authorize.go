package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/market"
	"github.com/crtx-market/crtx/oauth"
)

// The OAuth authorization endpoint is a page: the person signs in with
// their wallet (the sign-in page sends them back here), reads which app
// asks, picks the environment and a spend limit, and allows or denies.
// Allowing issues a code for a new API key with those limits; either way
// the browser goes back to the app's redirect URI.

// authorizeData is what the consent page shows and sends back.
type authorizeData struct {
	Client market.AuthorizeRequest
	// Name is the app's own name for itself, ClientHost where its
	// metadata document lives (for a client identified by URL), and
	// RedirectHost where the browser goes next.
	Name, ClientHost, RedirectHost string
	Limit                          string
	Env                            crtx.Environment
}

func authorizeRequest(v url.Values) market.AuthorizeRequest {
	return market.AuthorizeRequest{ResponseType: v.Get("response_type"), ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"),
		State: v.Get("state"), Scope: v.Get("scope"), CodeChallenge: v.Get("code_challenge"),
		CodeChallengeMethod: v.Get("code_challenge_method"), Resource: v.Get("resource")}
}

// authorize shows the consent page. A request whose client or redirect URI
// cannot be trusted gets an error page here, never a redirect (RFC 6749
// §4.1.2.1). Any other bad request is told on a page too, with a link back
// to the app carrying its OAuth error: a redirect to any registered URI
// that no person asked for would make this an open redirector (RFC 9700
// §4.11.2), since anyone may register.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) error {
	req := authorizeRequest(r.URL.Query())
	c, err := h.market.Connectors.Client(r.Context(), req.ClientID, req.RedirectURI)
	if err != nil {
		return h.authorizeProblem(w, r, err, nil)
	}
	if err := h.market.Connectors.CheckAuthorize(req); err != nil {
		var back *link
		// A link to an app's own scheme is one html/template will not
		// write; the person goes back to that app by hand.
		if u, perr := url.Parse(req.RedirectURI); perr == nil && (u.Scheme == "https" || u.Scheme == "http") {
			back = &link{answerURL(h.market.Config().PublicURL, req, oauthAnswer(err)), "Return to " + host(req.RedirectURI)}
		}
		return h.authorizeProblem(w, r, err, back)
	}
	v, err := h.session(r)
	if err != nil {
		http.Redirect(w, r, "/login?connect=1&next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return nil
	}
	return h.consentPage(w, req, consentVisit(v, req).page("Connect "+c.Name+" — crtx", consentData(c, req, "5", crtx.Devnet)))
}

// consentVisit is v with its forms bound to one authorization request:
// a consent form's token consents to that request alone, not to another
// one (another app, redirect, PKCE challenge or state) sent with it.
func consentVisit(v visit, req market.AuthorizeRequest) visit {
	v.key = v.key.bound("oauth-consent", req.ResponseType, req.ClientID, req.RedirectURI, req.State, req.Scope,
		req.CodeChallenge, req.CodeChallengeMethod, req.Resource)
	return v
}

// consentData is what the consent page shows of c and req, with the
// limit and environment the form holds.
func consentData(c crtx.OAuthClient, req market.AuthorizeRequest, limit string, env crtx.Environment) authorizeData {
	d := authorizeData{Client: req, Name: c.Name, RedirectHost: host(req.RedirectURI), Limit: limit, Env: env}
	if oauth.ClientIDIsURL(c.ID) {
		d.ClientHost = host(c.ID)
	}
	return d
}

// consentPage renders the page. Its forms may lead to the app's redirect
// URI: browsers hold form-action to redirects after a post too.
func (h *Handler) consentPage(w http.ResponseWriter, req market.AuthorizeRequest, p page) error {
	b, err := h.execute("authorize", p)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageSources+"; form-action 'self' "+cspSource(req.RedirectURI))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

// cspSource is the CSP source that admits uri: its origin, or for an
// app's own scheme, the scheme. The URI passed CheckRedirectURI, so its
// host is a name or an address.
func cspSource(uri string) string {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return "'none'"
	case u.Scheme != "https" && u.Scheme != "http":
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

func host(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return uri
	}
	return u.Host
}

// consent answers the consent form: a code for the app, or access_denied.
func (h *Handler) consent(w http.ResponseWriter, r *http.Request) error {
	req := authorizeRequest(r.PostForm)
	c, err := h.market.Connectors.Client(r.Context(), req.ClientID, req.RedirectURI)
	if err != nil {
		return h.authorizeProblem(w, r, err, nil)
	}
	if err := h.market.Connectors.CheckAuthorize(req); err != nil {
		return h.authorizeProblem(w, r, err, nil)
	}
	v, err := h.session(r)
	if err != nil {
		http.Redirect(w, r, "/login?connect=1&ended=1&next="+url.QueryEscape(authorizePath(req)), http.StatusSeeOther)
		return nil
	}
	v = consentVisit(v, req)
	nonce, err := v.key.check(r.PostFormValue("csrf"), v.at)
	if err != nil {
		return err
	}
	// Sent once: a second post of the same page (Back, then Allow again)
	// issues no second code.
	if first, err := h.market.Accounts.ClaimForm(r.Context(), v.owner(), nonce); err != nil {
		return err
	} else if !first {
		return crtx.Errorf(crtx.CodeInvalidSession, "this consent was sent already; start the connection again from the app")
	}
	if r.PostFormValue("decision") != "allow" {
		return h.backToClient(w, r, req, url.Values{"error": {oauth.AccessDenied}, "error_description": {"the person declined"}})
	}
	env := crtx.Environment(r.PostFormValue("environment"))
	limit, err := crtx.ParseUSDC(strings.TrimSpace(r.PostFormValue("spend_limit")))
	if err != nil || limit <= 0 || !env.Valid() {
		p := v.page("Connect "+c.Name+" — crtx", consentData(c, req, r.PostFormValue("spend_limit"), env))
		p.Error = "Spend limit: give an amount of USDC above 0, such as 5 or 0.50, and pick an environment."
		return h.consentPage(w, req, p)
	}
	code, err := h.market.Connectors.Authorize(r.Context(), c, req, market.Consent{Wallet: v.Wallet, Environment: env, SpendLimit: limit})
	if err != nil {
		return err
	}
	return h.backToClient(w, r, req, url.Values{"code": {code}})
}

// backToClient sends the browser to the app's redirect URI with answer.
func (h *Handler) backToClient(w http.ResponseWriter, r *http.Request, req market.AuthorizeRequest, answer url.Values) error {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, answerURL(h.market.Config().PublicURL, req, answer), http.StatusSeeOther)
	return nil
}

// answerURL is the app's redirect URI with answer, the request's state and
// the issuer (RFC 9207).
func answerURL(issuer string, req market.AuthorizeRequest, answer url.Values) string {
	u, err := url.Parse(req.RedirectURI)
	if err != nil {
		return req.RedirectURI
	}
	q := u.Query()
	for k, vs := range answer {
		q[k] = vs
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	q.Set("iss", issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// authorizeProblem is the page of a request that goes back to no app on
// its own; back, when the app may be told, is the link that tells it.
func (h *Handler) authorizeProblem(w http.ResponseWriter, r *http.Request, err error, back *link) error {
	var oe *oauth.Error
	if !errors.As(err, &oe) {
		return err
	}
	p := problem{Heading: "This app cannot connect", Text: sentence(oe.Description) + " Nothing was shared with the app. Start again from the app, or tell its makers.",
		Next: []link{{"/docs#mcp", "How apps connect to crtx"}, {"/", "Browse the agents"}}}
	if back != nil {
		p.Next = append([]link{*back}, p.Next...)
	}
	return h.renderStatus(w, http.StatusBadRequest, "error", h.visitor(r).page(p.Heading+" — crtx", p))
}

// oauthAnswer is an OAuth refusal as redirect parameters.
func oauthAnswer(err error) url.Values {
	oe := &oauth.Error{Code: oauth.InvalidRequest, Description: crtx.ErrorMessage(err)}
	errors.As(err, &oe)
	return url.Values{"error": {oe.Code}, "error_description": {oe.Description}}
}

// authorizePath is the consent page's address for req.
func authorizePath(req market.AuthorizeRequest) string {
	q := url.Values{}
	for k, v := range map[string]string{"response_type": req.ResponseType, "client_id": req.ClientID, "redirect_uri": req.RedirectURI,
		"state": req.State, "scope": req.Scope, "code_challenge": req.CodeChallenge, "code_challenge_method": req.CodeChallengeMethod, "resource": req.Resource} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return "/oauth/authorize?" + q.Encode()
}
