package client

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// CreateListing lists an agent (creator session required). A client of
// SignIn fills p.CreatorSignature when it is nil, and a client holding the
// agent's key (WithAgentKey) fills p.KeySignature; any other client's
// caller fills them, with SignListing and SignListingKey.
func (c *Client) CreateListing(ctx context.Context, p crtx.ListingParams) (api.CreatorAgent, error) {
	if err := c.sign(ctx, &p, ""); err != nil {
		return api.CreatorAgent{}, err
	}
	return do[api.CreatorAgent](ctx, c, "POST", "/v1/creator/agents", p)
}

// UpdateListing changes a listing; nil fields stay as they are. A new
// signing key needs both signatures, which the client fills as
// CreateListing does when p names a key.
func (c *Client) UpdateListing(ctx context.Context, id string, p crtx.ListingParams) (api.CreatorAgent, error) {
	if err := c.sign(ctx, &p, id); err != nil {
		return api.CreatorAgent{}, err
	}
	return do[api.CreatorAgent](ctx, c, "PATCH", "/v1/creator/agents/"+url.PathEscape(id), p)
}

// WithAgentKey returns a copy of c that also holds agent signing keys, in
// memory, to sign the listing statements of the keys they are
// (key_signature) in CreateListing and UpdateListing.
func (c *Client) WithAgentKey(keys ...ed25519.PrivateKey) *Client {
	cp := *c
	cp.agentKeys = append(slices.Clip(c.agentKeys), keys...)
	return &cp
}

// sign, for a client of SignIn and a p that registers a key (a new listing,
// or a change naming a key), fills, when p has no signatures yet,
// p.ListingNonce and p.Marketplace from a new nonce when they are nil and
// p.Replaces with the listing's key transaction for a change; then
// p.CreatorSignature when it is nil, and p.KeySignature when c holds the
// key p names and p has none. A p that lacks what the statement needs
// (a name, a price, a key) is sent unsigned, so that the marketplace's
// answer names the field at fault, as for any other invalid listing.
func (c *Client) sign(ctx context.Context, p *crtx.ListingParams, agentID string) error {
	if c.wallet == nil || (agentID != "" && p.SigningPublicKey == nil) {
		return nil
	}
	// Signatures the caller made cover a nonce, a marketplace and a key
	// transaction of the caller's: one added here would not be theirs.
	if p.CreatorSignature == nil && p.KeySignature == nil {
		if p.ListingNonce == nil || p.Marketplace == nil {
			n, err := c.ListingNonce(ctx)
			if err != nil {
				return err
			}
			if p.ListingNonce == nil {
				p.ListingNonce = &n.Nonce
			}
			if p.Marketplace == nil {
				p.Marketplace = &n.Marketplace
			}
		}
		if agentID != "" && p.Replaces == nil {
			agents, err := c.CreatorAgents(ctx)
			if err != nil {
				return err
			}
			for _, a := range agents {
				if a.AgentID == agentID && a.KeyTransaction != "" {
					p.Replaces = &a.KeyTransaction
				}
			}
		}
	}
	if p.CreatorSignature == nil {
		_ = SignListing(c.wallet, p, agentID)
	}
	if p.KeySignature == nil && p.SigningPublicKey != nil {
		for _, k := range c.agentKeys {
			if crtx.Address(k.Public().(ed25519.PublicKey)) == *p.SigningPublicKey {
				_ = c.SignListingKey(k, p, agentID)
			}
		}
	}
	return nil
}

// ListingNonce asks for a one-time nonce for the listing statement of one
// listing or change of key (creator session): the statement names it, and
// the marketplace uses it up with the transaction that carries it.
func (c *Client) ListingNonce(ctx context.Context) (api.ListingNonce, error) {
	return do[api.ListingNonce](ctx, c, "POST", "/v1/creator/listing-nonces", nil)
}

// SignListing is the package's SignListing with the wallet key of SignIn,
// for callers that send listing bodies of their own (Do).
func (c *Client) SignListing(p *crtx.ListingParams, agentID string) error {
	if c.wallet == nil {
		return errors.New("sign listing: the client holds no wallet key (only a client of SignIn does)")
	}
	return SignListing(c.wallet, p, agentID)
}

// SignListingKey is the package's SignListingKey for the wallet of SignIn.
func (c *Client) SignListingKey(key ed25519.PrivateKey, p *crtx.ListingParams, agentID string) error {
	if c.wallet == nil {
		return errors.New("sign listing key: the client holds no wallet key (only a client of SignIn does)")
	}
	return SignListingKey(key, crtx.Address(c.wallet.Public().(ed25519.PublicKey)), p, agentID)
}

// SignListing sets p.CreatorSignature to wallet's signature of the listing
// statement (crtx.ListingStatement, docs/creators.md) that the marketplace
// checks: for a new listing (agentID "") over the creator, name, price,
// signing key, listing nonce and marketplace of p, which must all be set
// (the nonce and the marketplace from ListingNonce); for a change of
// agentID's listing over the new signing key, the nonce, the marketplace
// and replaces (the listing's KeyTransaction), and only when p names a key (a change
// that keeps the key needs no signature, and p is left as it is). wallet is
// the key of the creator's wallet, the one signed in.
func SignListing(wallet ed25519.PrivateKey, p *crtx.ListingParams, agentID string) error {
	if len(wallet) != ed25519.PrivateKeySize {
		return fmt.Errorf("sign listing: the wallet key has %d bytes, not %d", len(wallet), ed25519.PrivateKeySize)
	}
	stmt, err := listingStatement(crtx.Address(wallet.Public().(ed25519.PublicKey)), p, agentID)
	if stmt == nil || err != nil {
		return err
	}
	sig := crtx.SignBase58(wallet, stmt)
	p.CreatorSignature = &sig
	return nil
}

// SignListingKey sets p.KeySignature to the agent signing key's own
// signature of the listing statement SignListing signs, for the creator
// wallet (its address): the proof that whoever lists the key holds it.
// key must be the key p.SigningPublicKey names. Like SignListing, it leaves
// a change that keeps the key as it is.
func SignListingKey(key ed25519.PrivateKey, wallet string, p *crtx.ListingParams, agentID string) error {
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("sign listing key: the agent key has %d bytes, not %d", len(key), ed25519.PrivateKeySize)
	}
	if pub := crtx.Address(key.Public().(ed25519.PublicKey)); p.SigningPublicKey != nil && *p.SigningPublicKey != pub {
		return fmt.Errorf("sign listing key: the key is %s, not the listing's signing_public_key %s", pub, *p.SigningPublicKey)
	}
	stmt, err := listingStatement(wallet, p, agentID)
	if stmt == nil || err != nil {
		return err
	}
	sig := crtx.SignBase58(key, stmt)
	p.KeySignature = &sig
	return nil
}

// listingStatement is the statement the signatures of p cover, for the
// creator wallet; nil without an error for a change that keeps the key.
func listingStatement(wallet string, p *crtx.ListingParams, agentID string) ([]byte, error) {
	data := map[string]string{"creator": wallet}
	kind := crtx.TxAgentListed
	if agentID != "" {
		if p.SigningPublicKey == nil {
			return nil, nil
		}
		kind, data["agent_id"] = crtx.TxListingUpdated, agentID
	} else {
		if p.Name == nil || p.Price == nil {
			return nil, errors.New("sign listing: a new listing's name and price_per_call_usdc are required")
		}
		// The marketplace lists, and so signs, the name trimmed.
		data["name"], data["price_per_call_usdc"] = strings.TrimSpace(*p.Name), p.Price.String()
		if p.PricingModel != nil && *p.PricingModel == crtx.PricingMetered {
			if p.Per1k == nil || p.Cap == nil {
				return nil, errors.New("sign listing: a metered listing's price_per_1k_tokens_usdc and max_price_per_call_usdc are required")
			}
			data["pricing_model"], data["price_per_1k_tokens_usdc"], data["max_price_per_call_usdc"] = crtx.PricingMetered, p.Per1k.String(), p.Cap.String()
		}
	}
	if p.SigningPublicKey == nil {
		return nil, errors.New("sign listing: signing_public_key is required")
	}
	if p.ListingNonce == nil {
		return nil, errors.New("sign listing: listing_nonce is required (ListingNonce gives one)")
	}
	if p.Marketplace == nil {
		return nil, errors.New("sign listing: marketplace is required (ListingNonce gives it)")
	}
	data["signing_public_key"], data["listing_nonce"], data["marketplace"] = *p.SigningPublicKey, *p.ListingNonce, *p.Marketplace
	// A listing written before key transactions were kept has none to
	// replace; the marketplace asks for replaces whenever it has one.
	if agentID != "" && p.Replaces != nil {
		data["replaces"] = *p.Replaces
	}
	stmt, err := crtx.ListingStatement(kind, data)
	if err != nil {
		return nil, fmt.Errorf("sign listing: %w", err)
	}
	return stmt, nil
}

// Delist takes an agent out of the catalog.
func (c *Client) Delist(ctx context.Context, id string) (api.CreatorAgent, error) {
	return do[api.CreatorAgent](ctx, c, "DELETE", "/v1/creator/agents/"+url.PathEscape(id), nil)
}

// CreatorAgents lists the creator's own agents, every status included,
// with their mainnet statistics.
func (c *Client) CreatorAgents(ctx context.Context) ([]api.CreatorAgent, error) {
	return c.CreatorAgentsIn(ctx, crtx.Mainnet)
}

// CreatorAgentsIn is CreatorAgents with env's statistics.
func (c *Client) CreatorAgentsIn(ctx context.Context, env crtx.Environment) ([]api.CreatorAgent, error) {
	var out api.CreatorAgentList
	err := c.call(ctx, "GET", "/v1/creator/agents?environment="+url.QueryEscape(string(env)), nil, &out)
	return out.Agents, err
}

// SetDisplayName sets the creator's public name.
func (c *Client) SetDisplayName(ctx context.Context, name string) (api.CreatorProfile, error) {
	return do[api.CreatorProfile](ctx, c, "PUT", "/v1/creator/profile", map[string]string{"display_name": name})
}

// TestExecution runs the Test Execution tool against an endpoint.
func (c *Client) TestExecution(ctx context.Context, endpoint, publicKey string) (api.TestReport, error) {
	return do[api.TestReport](ctx, c, "POST", "/v1/creator/test-execution",
		map[string]string{"endpoint_url": endpoint, "signing_public_key": publicKey})
}

// CreatorEarnings reads the creator's earnings in env (creator session).
func (c *Client) CreatorEarnings(ctx context.Context, env crtx.Environment) (crtx.Earnings, error) {
	return do[crtx.Earnings](ctx, c, "GET", "/v1/creator/earnings?environment="+string(env), nil)
}

// CreatorExecutions lists executions of the creator's agents; q holds the
// filters of GET /v1/executions and environment.
func (c *Client) CreatorExecutions(ctx context.Context, q url.Values) (api.ExecutionPage, error) {
	path := withQuery("/v1/creator/executions", q)
	return do[api.ExecutionPage](ctx, c, "GET", path, nil)
}

// CreatorDisputes lists disputes about the creator's agents (creator session).
func (c *Client) CreatorDisputes(ctx context.Context) ([]api.DisputeInfo, error) {
	var out api.DisputeList
	err := c.call(ctx, "GET", "/v1/creator/disputes", nil, &out)
	return out.Disputes, err
}

// RespondToDispute records the creator's answer (creator session).
func (c *Client) RespondToDispute(ctx context.Context, id, text string) (api.DisputeInfo, error) {
	return do[api.DisputeInfo](ctx, c, "POST", "/v1/creator/disputes/"+url.PathEscape(id)+"/response", map[string]string{"text": text})
}
