package market

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/oauth"
)

// The marketplace is the OAuth 2.1 authorization server of its own MCP
// endpoint (docs/integrations.md, "Connectors"): a person consents on the
// wallet sign-in page, and the connector gets an API key with the
// environment and spend limit chosen there, listed and revocable like any
// other. Clients are public; PKCE (S256) binds each code to its requester.

// Resource is the one resource tokens are issued for (RFC 8707): the MCP
// endpoint.
func (m *Connectors) Resource() string { return m.Links().MCP() }

// RegisterClient registers a client dynamically (RFC 7591).
func (m *Connectors) RegisterClient(ctx context.Context, body []byte) (crtx.OAuthClient, error) {
	meta, err := oauth.ParseClientMetadata(body)
	if err != nil {
		return crtx.OAuthClient{}, metadataError(err)
	}
	name := strings.TrimSpace(meta.ClientName)
	if name == "" {
		name = "An MCP client"
	}
	now := m.now()
	c := crtx.OAuthClient{ID: crtx.NewID("oc_"), Name: name, RedirectURIs: meta.RedirectURIs, CreatedAt: now}
	err = m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Access.InsertOAuthClient(ctx, c, now.Add(-crtx.UnusedClientTTL)) })
	return c, internal("register oauth client", err)
}

func metadataError(err error) error {
	if errors.Is(err, oauth.ErrRedirectURI) {
		return oauth.Errorf(oauth.InvalidRedirectURI, "%s", err.Error())
	}
	return oauth.Errorf(oauth.InvalidClientMetadata, "%s", err.Error())
}

// maxClientDocument bounds a Client ID Metadata Document; the draft
// suggests 5 KB, and a document is a short JSON object.
const maxClientDocument = 16 << 10

// Client is the client an authorization request names: a registered one
// that has not lapsed, or the one a Client ID Metadata Document describes,
// fetched from its https address (through the same address checks as
// creators' endpoints). redirectURI must be one of its own. Its errors are
// the kind never sent to the redirect URI (RFC 6749 §4.1.2.1).
func (m *Connectors) Client(ctx context.Context, clientID, redirectURI string) (crtx.OAuthClient, error) {
	if clientID == "" {
		return crtx.OAuthClient{}, oauth.Errorf(oauth.InvalidRequest, "client_id is missing")
	}
	var c crtx.OAuthClient
	if oauth.ClientIDIsURL(clientID) {
		var err error
		if c, err = m.clientDocument(clientID); err != nil {
			return c, err
		}
	} else {
		err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
			c, err = tx.Access.OAuthClient(ctx, clientID)
			return err
		})
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && c.Expired(m.now())) {
			return c, oauth.Errorf(oauth.InvalidClient, "client_id %q is not registered here (or its registration lapsed unused); register again", clientID)
		}
		if err != nil {
			return c, internal("oauth client", err)
		}
	}
	if !oauth.RedirectAllowed(c.RedirectURIs, redirectURI) {
		return c, oauth.Errorf(oauth.InvalidRequest, "redirect_uri %q is not one the client registered", redirectURI)
	}
	return c, nil
}

// clientDocTTL is how long a client's metadata document is kept: a crowd
// of authorization requests naming it fetches it once.
const clientDocTTL = 5 * time.Minute

// clientDocument fetches and checks a Client ID Metadata Document: its
// client_id must be its own address. What it says is not echoed in the
// error: the marketplace is no reader of others' pages.
func (m *core) clientDocument(url string) (crtx.OAuthClient, error) {
	return m.clientDocs.fetch(url, m.now(), func() (crtx.OAuthClient, error) {
		ctx, cancel := context.WithTimeout(m.bg, 5*time.Second)
		defer cancel()
		bad := oauth.Errorf(oauth.InvalidClient, "no valid client metadata document at %s (an https address answering 200 with the client's JSON metadata, its client_id that address, at most %d bytes)", url, maxClientDocument)
		body, err := m.cfg.Caller.Fetch(ctx, url, maxClientDocument)
		if err != nil {
			m.cfg.Logger.Info("client metadata document", "client_id", url, "err", err)
			return crtx.OAuthClient{}, bad
		}
		meta, err := oauth.ParseClientMetadata(body)
		if err != nil || meta.ClientID != url {
			return crtx.OAuthClient{}, bad
		}
		name := strings.TrimSpace(meta.ClientName)
		if name == "" {
			name = url
		}
		return crtx.OAuthClient{ID: url, Name: name, RedirectURIs: meta.RedirectURIs, CreatedAt: m.now()}, nil
	})
}

// AuthorizeRequest is an authorization request's parameters (RFC 6749
// §4.1.1, RFC 7636 §4.3, RFC 8707 §2).
type AuthorizeRequest struct {
	ResponseType, ClientID, RedirectURI, State, Scope string
	CodeChallenge, CodeChallengeMethod, Resource      string
}

// CheckAuthorize checks what Client does not: its errors go back to the
// client at its redirect URI.
func (m *Connectors) CheckAuthorize(r AuthorizeRequest) error {
	switch {
	case r.ResponseType != "code":
		return oauth.Errorf(oauth.UnsupportedResponse, "response_type must be \"code\"")
	case r.CodeChallengeMethod != "S256":
		return oauth.Errorf(oauth.InvalidRequest, "code_challenge_method must be S256 (PKCE is required)")
	case !oauth.ValidChallenge(r.CodeChallenge):
		return oauth.Errorf(oauth.InvalidRequest, "code_challenge must be 43 base64url characters (the S256 of the verifier)")
	case r.Resource != "" && r.Resource != m.Resource():
		return oauth.Errorf(oauth.InvalidTarget, "resource must be %s, the MCP endpoint tokens here are for", m.Resource())
	}
	return oauth.CheckScope(r.Scope)
}

// Consent is a person's answer on the consent page: the wallet signed in,
// and the environment and spend limit the connector's key gets.
type Consent struct {
	Wallet      string
	Environment crtx.Environment
	SpendLimit  crtx.USDC
}

// Authorize issues a code for an authorization request a person consented
// to. The request was checked by Client and CheckAuthorize.
func (m *Connectors) Authorize(ctx context.Context, c crtx.OAuthClient, r AuthorizeRequest, consent Consent) (string, error) {
	if !consent.Environment.Valid() {
		return "", crtx.Errorf(crtx.CodeInvalidRequest, "environment must be \"mainnet\" or \"devnet\"")
	}
	if consent.SpendLimit <= 0 {
		return "", crtx.Errorf(crtx.CodeInvalidRequest, "give the connector a spend limit of more than 0 USDC")
	}
	code := crtx.RandomBase62(43)
	now := m.now()
	row := crtx.OAuthCode{Hash: crtx.HashSecret(code), ClientID: c.ID, ClientName: c.Name, RedirectURI: r.RedirectURI,
		Challenge: r.CodeChallenge, Wallet: consent.Wallet, Environment: consent.Environment,
		SpendLimit: &consent.SpendLimit, ExpiresAt: now.Add(crtx.OAuthCodeTTL)}
	err := m.store.Update(ctx, func(tx crtx.Tx) error { return tx.Access.InsertOAuthCode(ctx, row, now) })
	return code, internal("oauth code", err)
}

// TokenRequest is a token request's parameters.
type TokenRequest struct {
	GrantType, Code, RedirectURI, ClientID, CodeVerifier, RefreshToken, Resource, Scope string
}

// Token answers a token request: an authorization code exchanged once for
// a new key, or a refresh token for the key's next secret.
func (m *Connectors) Token(ctx context.Context, r TokenRequest) (oauth.Tokens, error) {
	if r.Resource != "" && r.Resource != m.Resource() {
		return oauth.Tokens{}, oauth.Errorf(oauth.InvalidTarget, "resource must be %s", m.Resource())
	}
	if err := oauth.CheckScope(r.Scope); err != nil {
		return oauth.Tokens{}, err
	}
	switch r.GrantType {
	case "authorization_code":
		return m.exchange(ctx, r)
	case "refresh_token":
		return m.refresh(ctx, r)
	case "":
		return oauth.Tokens{}, oauth.Errorf(oauth.InvalidRequest, "grant_type is missing")
	}
	return oauth.Tokens{}, oauth.Errorf(oauth.UnsupportedGrantType, "grant_type must be authorization_code or refresh_token")
}

func (m *core) exchange(ctx context.Context, r TokenRequest) (oauth.Tokens, error) {
	if r.Code == "" || r.CodeVerifier == "" || r.ClientID == "" {
		return oauth.Tokens{}, oauth.Errorf(oauth.InvalidRequest, "code, code_verifier and client_id are required")
	}
	now := m.now()
	hash := crtx.HashSecret(r.Code)
	var t oauth.Tokens
	valid := false
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		valid = false
		c, err := tx.Access.OAuthCode(ctx, hash, now)
		if errors.Is(err, crtx.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.Spent != nil {
			if c.SpentAt != nil && now.Sub(*c.SpentAt) < reuseGrace {
				// The client's own retry, racing its first exchange (on
				// another replica): refused, and the winner keeps its key.
				return nil
			}
			// Presented again: whoever holds it now may have stolen it, so
			// the key it gave is revoked (RFC 6749 §4.1.2).
			return m.revokeKey(ctx, tx, *c.Spent, now)
		}
		// Spent whatever follows: a code that fails a check is used up, as
		// the transaction commits either way and valid says which it was.
		if c.ClientID != r.ClientID || c.RedirectURI != r.RedirectURI || !oauth.CheckPKCE(r.CodeVerifier, c.Challenge) {
			return tx.Access.SpendOAuthCode(ctx, hash, "", now)
		}
		if err := tx.Access.UseOAuthClient(ctx, c.ClientID, now); err != nil {
			return err
		}
		// Connecting the app again replaces its connection: one key, one
		// spend limit, per app and wallet.
		keys, err := tx.Access.KeysByWallet(ctx, c.Wallet)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.Client == c.ClientID && k.RevokedAt == nil {
				if err := m.revokeKey(ctx, tx, k.ID, now); err != nil {
					return err
				}
			}
		}
		var k crtx.APIKey
		k, t = m.newTokenKey(c, now)
		if err := tx.Access.SpendOAuthCode(ctx, hash, k.ID, now); err != nil {
			return err
		}
		valid = true
		return tx.Access.InsertKey(ctx, k)
	})
	if err == nil && !valid {
		return t, oauth.Errorf(oauth.InvalidGrant, "the code is unknown, expired, already used, or was issued for another client, redirect_uri or code_verifier")
	}
	return t, internal("exchange oauth code", err)
}

// revokeKey revokes a connector's key, if it is not already, and forgets
// its cached copy.
func (m *core) revokeKey(ctx context.Context, tx crtx.Tx, id string, now time.Time) error {
	k, err := tx.Access.KeyByID(ctx, id)
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && k.RevokedAt != nil) {
		return nil
	}
	if err != nil {
		return err
	}
	m.keys.forget(k.Hash)
	return tx.Access.RevokeKey(ctx, id, now)
}

// newTokenKey is the key a consent makes, and its first tokens.
func (m *core) newTokenKey(c crtx.OAuthCode, now time.Time) (crtx.APIKey, oauth.Tokens) {
	name := c.ClientName
	if utf8.RuneCountInString(name) > 80 {
		name = string([]rune(name)[:80])
	}
	k := crtx.APIKey{ID: crtx.NewID("key_"), Name: name + " (MCP connector)", Environment: c.Environment, CreatedAt: now,
		SpendLimit: c.SpendLimit, Wallet: c.Wallet, Client: c.ClientID}
	return k, m.rotate(&k, now)
}

// rotate gives k a new secret and refresh token, and returns them.
func (m *core) rotate(k *crtx.APIKey, now time.Time) oauth.Tokens {
	access, refresh := crtx.NewKeySecret(k.Environment), crtx.RefreshPrefix+crtx.RandomBase62(43)
	expires := now.Add(crtx.AccessTokenTTL)
	k.Hash, k.Prefix, k.ExpiresAt, k.RefreshHash = crtx.HashSecret(access), access[:len(crtx.LiveKeyPrefix)+4], &expires, crtx.HashSecret(refresh)
	return oauth.Tokens{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(crtx.AccessTokenTTL.Seconds()), RefreshToken: refresh, Scope: oauth.Scope}
}

// RefreshIdleTTL is how long a connector's refresh token outlives its last
// access token: a connection unused for this long has to be made again.
const RefreshIdleTTL = 30 * 24 * time.Hour

// reuseGrace is how soon after a code or a refresh token was spent its
// second presentation is taken for the client's own retry racing the
// first (two replicas at once, a lost answer), refused without revoking
// anything; later, it is taken for a theft, and the grant is revoked.
const reuseGrace = 10 * time.Second

func (m *core) refresh(ctx context.Context, r TokenRequest) (oauth.Tokens, error) {
	if r.RefreshToken == "" || r.ClientID == "" {
		return oauth.Tokens{}, oauth.Errorf(oauth.InvalidRequest, "refresh_token and client_id are required")
	}
	bad := oauth.Errorf(oauth.InvalidGrant, "the refresh token is unknown, already used, expired, revoked, or was issued to another client")
	now := m.now()
	var t oauth.Tokens
	var old string
	refused := false
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		refused = false
		hash := crtx.HashSecret(r.RefreshToken)
		k, err := tx.Access.KeyByRefreshHash(ctx, hash)
		if errors.Is(err, crtx.ErrNotFound) {
			// A token rotated away, presented again: one of its two holders
			// stole it, so the whole grant goes (OAuth 2.1, refresh token
			// rotation), unless it is the client's own retry of a moment
			// ago. The revocation commits; the answer is the refusal.
			refused = true
			id, at, err := tx.Access.SpentRefresh(ctx, hash)
			switch {
			case errors.Is(err, crtx.ErrNotFound), err == nil && now.Sub(at) < reuseGrace:
				return nil
			case err != nil:
				return err
			}
			return m.revokeKey(ctx, tx, id, now)
		}
		if err == nil && (k.RevokedAt != nil || k.Client != r.ClientID ||
			k.ExpiresAt == nil || !now.Before(k.ExpiresAt.Add(RefreshIdleTTL))) {
			return bad
		}
		if err != nil {
			return err
		}
		from := k.RefreshHash
		old = k.Hash
		t = m.rotate(&k, now)
		if err := tx.Access.RefreshKey(ctx, k, from, now, now.Add(-RefreshIdleTTL)); errors.Is(err, crtx.ErrConflict) {
			return bad
		} else if err != nil {
			return err
		}
		return nil
	})
	if err == nil && old != "" {
		// The old secret is refused from now on by this process; by others
		// within keyCacheTTL.
		m.keys.forget(old)
	}
	if err == nil && refused {
		return oauth.Tokens{}, bad
	}
	return t, oauthInternal("refresh oauth token", err)
}

// RevokeToken revokes the key an access or refresh token belongs to (RFC
// 7009): the connector is disconnected, as by Revoke on the keys page. The
// token is proof enough; a client_id, when given, must be the token's
// client. An unknown token, or one of another client, is no error (§2.2),
// and a key made by hand is not a token to revoke here.
func (m *Connectors) RevokeToken(ctx context.Context, token, clientID string) error {
	hash := crtx.HashSecret(token)
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		k, err := tx.Access.KeyByRefreshHash(ctx, hash)
		if errors.Is(err, crtx.ErrNotFound) {
			k, err = tx.Access.KeyByHash(ctx, hash)
		}
		if errors.Is(err, crtx.ErrNotFound) || (err == nil && (k.Client == "" || (clientID != "" && k.Client != clientID))) {
			return nil
		}
		if err != nil {
			return err
		}
		return m.revokeKey(ctx, tx, k.ID, m.now())
	})
	return internal("revoke oauth token", err)
}

// oauthInternal passes an OAuthError on, and wraps anything else as
// internal does.
func oauthInternal(what string, err error) error {
	var oe *oauth.Error
	if errors.As(err, &oe) {
		return oe
	}
	return internal(what, err)
}
