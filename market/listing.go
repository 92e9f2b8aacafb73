package market

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
)

// reachable runs the reachability test and turns a failure into 422. The
// test of a new listing names no agent (id ""): its id is not the
// creator's to know yet, and an agent's service configured with its ids
// accepts the empty one for tests made for its key (docs/creators.md).
func (m *core) reachable(ctx context.Context, agentID string, a crtx.Agent) error {
	if err := m.cfg.Caller.CheckURL(ctx, "endpoint_url", a.EndpointURL); err != nil {
		return err
	}
	pub, err := crtx.ParseAddress("signing_public_key", a.SigningPublicKey)
	if err != nil {
		return err
	}
	_, metered := a.Metered()
	rep := m.probe(ctx, a.Creator, agentID, a.EndpointURL, a.SigningPublicKey, pub, a.TimeoutSeconds, metered, a.Example, crtx.TestReport{Problems: []string{}})
	if rep.Example != "" && rep.ShapeOK && rep.Status == "failed" {
		return crtx.InvalidField("example_task", "%s", strings.Join(rep.Problems, "; "))
	}
	if !rep.Passes() {
		return crtx.Errorf(crtx.CodeEndpointUnreachable, "the reachability test of %s failed: %s", a.EndpointURL, strings.Join(rep.Problems, "; "))
	}
	return nil
}

// metadataHash commits a listing's details to the ledger without
// publishing what the seed keeps private (the endpoint).
func metadataHash(a crtx.Agent) string {
	b, _ := json.Marshal(struct {
		Name, Tagline, Description string
		Tags                       []string
		In, Out                    json.RawMessage
		Price                      crtx.USDC
		Endpoint, Key              string
		Timeout                    int
		Status                     crtx.AgentStatus
	}{a.Name, a.Tagline, a.Description, a.Tags, a.InputSchema, a.OutputSchema, a.Price, a.EndpointURL, a.SigningPublicKey, a.TimeoutSeconds, a.Status})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// signatures are what a listing transaction that registers a key carries
// to show who authorised it: the marketplace's one-time nonce, the
// marketplace and the key transaction the statement is bound to, and the
// two signatures of the statement that names them.
type signatures struct {
	nonce, marketplace, replaces, creator, key string
}

// write puts the signatures into a transaction's data.
func (s signatures) write(data map[string]string) {
	data["listing_nonce"], data["creator_signature"], data["key_signature"] = s.nonce, s.creator, s.key
	data["marketplace"] = s.marketplace
	if s.replaces != "" {
		data["replaces"] = s.replaces
	}
}

// bound checks that p names what the statement of a kind transaction is
// bound to, the marketplace's host and, for a key change, replaces (the
// transaction that registered the listing's key as it is), and writes them
// into data. The member is required, not filled in, so that the refusal of
// a statement made elsewhere or for an earlier key says so rather than
// failing as a bad signature.
func (m *core) bound(kind crtx.TxKind, data map[string]string, p crtx.ListingParams, replaces string) error {
	switch {
	case p.Marketplace == nil || *p.Marketplace == "":
		return crtx.InvalidField("marketplace", "is required: the host of this marketplace's public URL, %q, which the listing statement names (POST /v1/creator/listing-nonces gives it)", m.domain)
	case *p.Marketplace != m.domain:
		return crtx.InvalidField("marketplace", "is %q, but this marketplace is %q: a listing statement signed for another marketplace is not valid here", *p.Marketplace, m.domain)
	}
	data["marketplace"] = m.domain
	if kind != crtx.TxListingUpdated || replaces == "" {
		return nil
	}
	switch {
	case p.Replaces == nil || *p.Replaces == "":
		return crtx.InvalidField("replaces", "is required: the listing's key_transaction, %q, the transaction that registered the key this change replaces", replaces)
	case *p.Replaces != replaces:
		return crtx.InvalidField("replaces", "is %q, but the listing's key was registered by %q: sign the change of the key the listing has now", *p.Replaces, replaces)
	}
	data["replaces"] = replaces
	return nil
}

// listingSignatures checks that p carries a listing nonce and the two
// signatures of the listing statement of a kind transaction with data (its
// data as it will be written, creator included, the nonce added): the
// creator's wallet's (creator_signature) and the signing key's own
// (key_signature). So the ledger shows that the wallet authorised the key
// and that whoever holds the key agreed to be listed by that wallet: a
// listing cannot register a key its creator does not hold, so no one can
// list another's service behind a proxy and be paid for its work. The
// nonce is used up when the transaction is written (useNonce): a statement
// read from the ledger never serves again.
//
// replaces is the listing's key transaction for a key change ("" for a new
// listing, and for a listing written before key transactions were kept).
func (m *core) listingSignatures(kind crtx.TxKind, data map[string]string, p crtx.ListingParams, replaces string) (signatures, error) {
	if p.ListingNonce == nil || *p.ListingNonce == "" {
		return signatures{}, crtx.InvalidField("listing_nonce", "is required: POST /v1/creator/listing-nonces gives one, for the listing statement both signatures cover (docs/creators.md)")
	}
	if !crtx.IsListingNonce(*p.ListingNonce) {
		return signatures{}, crtx.InvalidField("listing_nonce", "is not a nonce of POST /v1/creator/listing-nonces")
	}
	data["listing_nonce"] = *p.ListingNonce
	if err := m.bound(kind, data, p, replaces); err != nil {
		return signatures{}, err
	}
	stmt, err := crtx.ListingStatement(kind, data)
	if err != nil {
		return signatures{}, fmt.Errorf("listing signatures: %w", err)
	}
	s := signatures{nonce: *p.ListingNonce, marketplace: data["marketplace"], replaces: data["replaces"]}
	if s.creator, err = statementSignature("creator_signature", "your wallet", "creator", data, stmt, p.CreatorSignature); err != nil {
		return signatures{}, err
	}
	if s.key, err = statementSignature("key_signature", "the agent's signing key", "signing_public_key", data, stmt, p.KeySignature); err != nil {
		return signatures{}, err
	}
	return s, nil
}

// useNonce uses up wallet's listing nonce in the transaction that writes
// the statement it is in.
func (m *core) useNonce(ctx context.Context, tx crtx.Tx, wallet, nonce string) error {
	ok, err := tx.Access.UseNonce(ctx, nonce, wallet, m.now())
	if err == nil && !ok {
		return crtx.InvalidField("listing_nonce", "is not one the marketplace gave your wallet, or it expired or was used: POST /v1/creator/listing-nonces for a new one, and sign again")
	}
	return err
}

// ListingNonce issues wallet a one-time listing nonce, valid for an hour.
func (m *Listings) ListingNonce(ctx context.Context, wallet string) (crtx.ListingNonce, error) {
	n := crtx.ListingNonce{Nonce: crtx.ListingNoncePrefix + crtx.RandomBase62(22), ExpiresAt: m.now().Truncate(time.Second).Add(crtx.ListingNonceTTL), Marketplace: m.domain}
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		return tx.Access.InsertNonce(ctx, crtx.Nonce{Nonce: n.Nonce, Wallet: wallet, ExpiresAt: n.ExpiresAt})
	})
	if err != nil {
		return crtx.ListingNonce{}, internal("listing nonce", err)
	}
	return n, nil
}

// OpenListingNonce is a listing nonce wallet holds unused with at least
// ten minutes left, for a form served again to carry instead of a new one;
// false when it holds none. Pages reuse it, so that reading the creator
// console again and again does not spend the wallet's allowance of nonces.
func (m *Listings) OpenListingNonce(ctx context.Context, wallet string) (crtx.ListingNonce, bool, error) {
	n, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Nonce, error) {
		return tx.Access.OpenNonce(ctx, wallet, crtx.ListingNoncePrefix, m.now().Add(10*time.Minute))
	})
	if errors.Is(err, crtx.ErrNotFound) {
		return crtx.ListingNonce{}, false, nil
	}
	if err != nil {
		return crtx.ListingNonce{}, false, internal("listing nonce", err)
	}
	return crtx.ListingNonce{Nonce: n.Nonce, ExpiresAt: n.ExpiresAt, Marketplace: m.domain}, true, nil
}

// statementSignature checks field, sig, the signature of stmt by the key
// that data's member signer names (who, in the messages).
func statementSignature(field, who, signer string, data map[string]string, stmt []byte, sig *string) (string, error) {
	what := fmt.Sprintf("the base58 Ed25519 signature, by %s %s, of the UTF-8 bytes of the listing statement %s (docs/creators.md)", who, data[signer], stmt)
	if sig == nil || *sig == "" {
		return "", crtx.InvalidField(field, "is required: %s", what)
	}
	// One spelling only, as the sign-in signature: the ledger carries it
	// as given.
	if strings.HasPrefix(*sig, "ed25519:") {
		return "", crtx.InvalidField(field, "is plain base58, without the \"ed25519:\" prefix")
	}
	pub, err := crtx.ParseAddress(signer, data[signer])
	if err != nil {
		return "", err
	}
	if len(*sig) > 100 || !crtx.VerifyBase58(pub, stmt, *sig) {
		return "", crtx.InvalidField(field, "does not verify: give %s", what)
	}
	return *sig, nil
}

func listingData(a crtx.Agent) map[string]string {
	data := map[string]string{"agent_id": a.ID, "creator": a.Creator, "name": a.Name,
		"price_per_call_usdc": a.Price.String(), "signing_public_key": a.SigningPublicKey,
		"status": string(a.Status), "metadata_hash": metadataHash(a)}
	// A metered listing's prices are all on the ledger, and in the
	// statement its creator signs (crtx.ListingStatement).
	if m, ok := a.Metered(); ok {
		data["pricing_model"], data["price_per_1k_tokens_usdc"], data["max_price_per_call_usdc"] =
			crtx.PricingMetered, m.Per1k.String(), m.Max.String()
	}
	return data
}

// lockCollateral moves amount of the creator's mainnet funds into the
// listing's collateral account.
func (m *core) lockCollateral(ctx context.Context, tx crtx.Tx, a crtx.Agent, amount crtx.USDC) error {
	wallet := crtx.NewAccount(crtx.Mainnet, crtx.AccountWallet, a.Creator, a.Creator)
	coll := crtx.NewAccount(crtx.Mainnet, crtx.AccountCollateral, a.ID, a.Creator)
	_, err := m.post(ctx, tx, crtx.Mainnet, crtx.TxCollateralLocked, map[string]string{"agent_id": a.ID, "creator": a.Creator},
		[]crtx.Posting{{From: wallet.Address, To: coll.Address, Amount: amount}}, wallet, coll)
	if errors.Is(err, crtx.ErrInsufficientFunds) {
		return &shortfall{env: crtx.Mainnet, wallet: a.Creator, need: amount, deposit: true,
			format: "your mainnet balance has %[1]s USDC available (%[2]s); the listing needs %[3]s USDC of collateral"}
	}
	return err
}

// CreateListing lists an agent, all or nothing: validation, the endpoint
// check, the reachability test, collateral locked from the creator's mainnet
// balance, and the AgentListed transaction (CONTRACT §6).
func (m *Listings) CreateListing(ctx context.Context, wallet string, p crtx.ListingParams) (crtx.AgentListItem, error) {
	a := crtx.Agent{ID: "agt_" + crtx.RandomBase62(16), Creator: wallet, Status: crtx.AgentActive}
	if err := apply(p, &a, true); err != nil {
		return crtx.AgentListItem{}, err
	}
	sigs, err := m.listingSignatures(crtx.TxAgentListed, listingData(a), p, "")
	if err != nil {
		return crtx.AgentListItem{}, err
	}
	if err := m.reachable(ctx, "", a); err != nil {
		return crtx.AgentListItem{}, err
	}
	now := m.now()
	a.CreatedAt, a.UpdatedAt = now, now
	a.Collateral = crtx.CollateralFor(m.cfg.CollateralTiers, a.Hold())
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		if err := olderReplicas(ctx, tx, a, m.now(), m.cfg.Heartbeat); err != nil {
			return err
		}
		if err := m.useNonce(ctx, tx, wallet, sigs.nonce); err != nil {
			return err
		}
		if err := tx.Catalog.EnsureCreator(ctx, wallet, now); err != nil {
			return err
		}
		if err := m.lockCollateral(ctx, tx, a, a.Collateral); err != nil {
			return err
		}
		// The agent row names the AgentListed transaction that registered
		// its key (executions copy it into listing_transaction), so the
		// transaction is built first and both are written together.
		data := listingData(a)
		sigs.write(data)
		lt, accounts := m.ledgerTx(crtx.Mainnet, crtx.TxAgentListed, data, nil, crtx.ListingAccount(a))
		a.KeyTx = lt.ID
		if err := tx.Catalog.InsertAgent(ctx, a); err != nil {
			return err
		}
		return tx.Ledger.InsertTransaction(ctx, &lt, accounts...)
	})
	m.catalogChanged()
	if err != nil {
		return crtx.AgentListItem{}, internal("create listing", m.explain(ctx, err))
	}
	return m.CreatorAgent(ctx, wallet, a.ID)
}

// olderReplicas refuses to list a metered agent while a replica of a
// release before metered listings beats (within missedBeats heartbeats of
// now): it would open its calls at the base price, and its roll-up would
// credit a call's unused hold to its caller a second time.
func olderReplicas(ctx context.Context, tx crtx.Tx, a crtx.Agent, now time.Time, heartbeat time.Duration) error {
	if _, metered := a.Metered(); !metered {
		return nil
	}
	old, err := tx.System.ReplicasBelow(ctx, crtx.ReleaseMetered, now.Add(-missedBeats*heartbeat))
	if err != nil || len(old) == 0 {
		return err
	}
	return &crtx.Error{Code: crtx.CodeUnavailable, RetryAfter: int(missedBeats * heartbeat / time.Second), Message: fmt.Sprintf("replica %s runs a "+
		"release that does not know metered listings: upgrade every replica, then list this agent once the older ones have stopped", old[0])}
}

// ownAgent loads one of wallet's listings that is not delisted; anything
// else is agent_not_found, so ids reveal nothing.
func ownAgent(ctx context.Context, tx crtx.Tx, wallet, id string) (crtx.Agent, error) {
	a, err := tx.Catalog.Agent(ctx, id)
	if errors.Is(err, crtx.ErrNotFound) || (err == nil && (a.Creator != wallet || a.Status == crtx.AgentDelisted)) {
		return crtx.Agent{}, crtx.Errorf(crtx.CodeAgentNotFound, "you have no listed agent %q", id)
	}
	return a, err
}

// UpdateListing changes a listing (CONTRACT §6): each change is a
// ListingUpdated transaction; a new endpoint or key is tested again; a price
// in a higher collateral tier locks the difference.
func (m *Listings) UpdateListing(ctx context.Context, wallet, id string, p crtx.ListingParams) (crtx.AgentListItem, error) {
	return m.updateListing(ctx, wallet, id, p, nil)
}

// UpdateListingWithin is UpdateListing for a person who agreed to lock at
// most more collateral than the listing holds: a change that would lock
// more fails with a *MoreCollateral and changes nothing. The bound holds in
// the transaction that locks, against the listing as written; it is also
// checked before a new endpoint's test, so as not to make a person wait
// seconds for a refusal.
func (m *Listings) UpdateListingWithin(ctx context.Context, wallet, id string, p crtx.ListingParams, more crtx.USDC) (crtx.AgentListItem, error) {
	return m.updateListing(ctx, wallet, id, p, &more)
}

// MoreCollateral is the refusal of a change that would lock more
// collateral than its sender agreed to: it names what it would lock.
type MoreCollateral struct {
	More crtx.USDC
	err  error
}

func (e *MoreCollateral) Error() string { return e.err.Error() }
func (e *MoreCollateral) Unwrap() error { return e.err }

// collateralFor is the collateral a listing must lock more at its price;
// beyond within (nil: no bound), a *MoreCollateral.
func (m *core) collateralFor(a crtx.Agent, within *crtx.USDC) (crtx.USDC, error) {
	more := max(crtx.CollateralFor(m.cfg.CollateralTiers, a.Hold())-a.Collateral, 0)
	if within != nil && more > *within {
		return 0, &MoreCollateral{More: more, err: crtx.InvalidField("price_per_call_usdc",
			"this change locks %s USDC more collateral from your mainnet balance, for what the price's tier needs beyond what the listing holds; confirm that amount", more)}
	}
	return more, nil
}

func (m *core) updateListing(ctx context.Context, wallet, id string, p crtx.ListingParams, within *crtx.USDC) (crtx.AgentListItem, error) {
	if p.Name != nil {
		return crtx.AgentListItem{}, crtx.InvalidField("name", "cannot change; delist and list again under a new name")
	}
	a, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) (crtx.Agent, error) { return ownAgent(ctx, tx, wallet, id) })
	if err != nil {
		return crtx.AgentListItem{}, internal("update listing", err)
	}
	if p.Status != nil && *p.Status != crtx.AgentActive && *p.Status != crtx.AgentPaused {
		return crtx.AgentListItem{}, crtx.InvalidField("status", "must be \"active\" or \"paused\"; DELETE the agent to delist it")
	}
	// edit applies the change to a listing as read.
	edit := func(a *crtx.Agent) error {
		if err := apply(p, a, false); err != nil {
			return err
		}
		if p.Status != nil {
			a.Status = *p.Status
		}
		return nil
	}
	// keySignatures are those that a change of the signing key needs,
	// checked; none when the key stays.
	keySignatures := func(cur, a crtx.Agent) (*signatures, error) {
		if a.SigningPublicKey == cur.SigningPublicKey {
			return nil, nil
		}
		s, err := m.listingSignatures(crtx.TxListingUpdated, listingData(a), p, cur.KeyTx)
		return &s, err
	}
	before := a
	if err := edit(&a); err != nil {
		return crtx.AgentListItem{}, err
	}
	if _, err := keySignatures(before, a); err != nil {
		return crtx.AgentListItem{}, err
	}
	if len(changedFields(before, a)) > 0 {
		if _, err := m.collateralFor(a, within); err != nil {
			return crtx.AgentListItem{}, err // before the endpoint's test, which takes seconds
		}
	}
	if a.EndpointURL != before.EndpointURL || a.SigningPublicKey != before.SigningPublicKey || slices.ContainsFunc(changedFields(before, a), func(f string) bool { return strings.HasPrefix(f, "example_") }) {
		if err := m.reachable(ctx, a.ID, a); err != nil {
			return crtx.AgentListItem{}, err
		}
	}
	// The reachability test takes seconds: the change is applied to the
	// listing as it is when written, so that what others changed meanwhile
	// (an operator's suspension, the collateral) stays as they left it.
	err = m.store.Update(ctx, func(tx crtx.Tx) error {
		cur, err := ownAgent(ctx, tx, wallet, id)
		if err != nil {
			return err
		}
		a = cur
		if err := edit(&a); err != nil {
			return err
		}
		changed := changedFields(cur, a)
		if len(changed) == 0 {
			return nil
		}
		// Checked again against the listing as written: the key it
		// replaces may have changed during the reachability test.
		sigs, err := keySignatures(cur, a)
		if err != nil {
			return err
		}
		if sigs != nil {
			if err := m.useNonce(ctx, tx, wallet, sigs.nonce); err != nil {
				return err
			}
		}
		a.UpdatedAt = m.now()
		more, err := m.collateralFor(a, within)
		if err != nil {
			return err
		}
		if more > 0 {
			if err := m.lockCollateral(ctx, tx, a, more); err != nil {
				return err
			}
			a.Collateral += more
		}
		data := listingData(a)
		data["changed"] = strings.Join(changed, ",")
		if sigs != nil {
			sigs.write(data)
		}
		lt, accounts := m.ledgerTx(crtx.Mainnet, crtx.TxListingUpdated, data, nil, crtx.ListingAccount(a))
		if sigs != nil {
			a.KeyTx = lt.ID
		}
		if err := tx.Catalog.UpdateAgent(ctx, a); err != nil {
			return err
		}
		return tx.Ledger.InsertTransaction(ctx, &lt, accounts...)
	})
	m.catalogChanged()
	if err != nil {
		return crtx.AgentListItem{}, internal("update listing", m.explain(ctx, err))
	}
	return m.market.Listings.CreatorAgent(ctx, wallet, id)
}

func changedFields(a, b crtx.Agent) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	add("tagline", a.Tagline != b.Tagline)
	add("description", a.Description != b.Description)
	add("tags", strings.Join(a.Tags, ",") != strings.Join(b.Tags, ","))
	add("input_schema", string(a.InputSchema) != string(b.InputSchema))
	add("output_schema", string(a.OutputSchema) != string(b.OutputSchema))
	add("price_per_call_usdc", a.Price != b.Price)
	add("price_per_1k_tokens_usdc", a.Per1k != b.Per1k)
	add("max_price_per_call_usdc", a.Cap != b.Cap)
	add("endpoint_url", a.EndpointURL != b.EndpointURL)
	add("signing_public_key", a.SigningPublicKey != b.SigningPublicKey)
	add("timeout_seconds", a.TimeoutSeconds != b.TimeoutSeconds)
	add("status", a.Status != b.Status)
	add("example_task", a.Example.Task != b.Example.Task)
	add("example_parameters", string(a.Example.Parameters) != string(b.Example.Parameters))
	return out
}

// Delist takes an agent out of the catalog at once (AgentDelisted). Its
// collateral stays locked until the release job returns it.
func (m *Listings) Delist(ctx context.Context, wallet, id string) (crtx.AgentListItem, error) {
	err := m.store.Update(ctx, func(tx crtx.Tx) error {
		a, err := ownAgent(ctx, tx, wallet, id)
		if err != nil {
			return err
		}
		now := m.now()
		a.Status, a.UpdatedAt, a.DelistedAt = crtx.AgentDelisted, now, &now
		if err := tx.Catalog.UpdateAgent(ctx, a); err != nil {
			return err
		}
		_, err = m.post(ctx, tx, crtx.Mainnet, crtx.TxAgentDelisted, listingData(a), nil, crtx.ListingAccount(a))
		return err
	})
	m.catalogChanged()
	if err != nil {
		return crtx.AgentListItem{}, internal("delist", err)
	}
	return m.CreatorAgent(ctx, wallet, id)
}

// CreatorListings lists wallet's agents as listed, every status included,
// without their statistics: one read, for a page that names them.
func (m *Listings) CreatorListings(ctx context.Context, wallet string) ([]crtx.Agent, error) {
	out, err := crtx.Read(ctx, m.store, func(tx crtx.Tx) ([]crtx.Agent, error) { return tx.Catalog.AgentsByCreator(ctx, wallet) })
	return out, internal("creator listings", err)
}

// CreatorAgents lists wallet's own agents, every status included.
func (m *Listings) CreatorAgents(ctx context.Context, wallet string, env crtx.Environment) ([]crtx.AgentListItem, error) {
	var out []crtx.AgentListItem
	err := m.store.View(ctx, func(tx crtx.Tx) error {
		agents, err := tx.Catalog.AgentsByCreator(ctx, wallet)
		if err != nil {
			return err
		}
		out = make([]crtx.AgentListItem, 0, len(agents))
		for _, a := range agents {
			it, err := tx.Catalog.AgentListing(ctx, a.ID, env)
			if err != nil {
				return err
			}
			out = append(out, it)
		}
		return nil
	})
	return out, internal("creator agents", err)
}

// Locked is the collateral one of a creator's listings holds on mainnet
// now (after any slashing), and from when it may return: for a listing
// still listed, none yet (it returns after delisting); for a delisted
// one, DisputeWindow after its delisting at the earliest (later if it ran
// since, or while a dispute about it is open: ReleaseCollateral).
type Locked struct {
	Agent  crtx.Agent
	Amount crtx.USDC
	From   *time.Time
}

// LockedCollateral is what wallet's listings hold as collateral, listing
// by listing, those that hold nothing left out: what its mainnet balance
// does not show as available.
func (m *Listings) LockedCollateral(ctx context.Context, wallet string) ([]Locked, error) {
	var out []Locked
	err := m.store.View(ctx, func(tx crtx.Tx) error {
		agents, err := tx.Catalog.AgentsByCreator(ctx, wallet)
		if err != nil {
			return err
		}
		for _, a := range agents {
			acc, err := tx.Ledger.Account(ctx, crtx.Mainnet, crtx.AccountAddress(crtx.AccountCollateral, a.ID))
			if errors.Is(err, crtx.ErrNotFound) || (err == nil && acc.Balance <= 0) {
				continue
			}
			if err != nil {
				return err
			}
			l := Locked{Agent: a, Amount: acc.Balance}
			if a.DelistedAt != nil {
				from := a.DelistedAt.Add(crtx.DisputeWindow)
				l.From = &from
			}
			out = append(out, l)
		}
		return nil
	})
	return out, internal("locked collateral", err)
}

// CreatorAgent is one of the wallet's agents, delisted ones included, as
// its creator sees it.
func (m *Listings) CreatorAgent(ctx context.Context, wallet, id string) (crtx.AgentListItem, error) {
	var it crtx.AgentListItem
	err := m.store.View(ctx, func(tx crtx.Tx) (err error) {
		it, err = tx.Catalog.AgentListing(ctx, id, crtx.Mainnet)
		if err = missing(err, crtx.CodeAgentNotFound, "you have no agent %q", id); err == nil && it.Agent.Creator != wallet {
			return crtx.Errorf(crtx.CodeAgentNotFound, "you have no agent %q", id)
		}
		return err
	})
	if err != nil {
		return crtx.AgentListItem{}, internal("creator agent", err)
	}
	return it, nil
}

// SetDisplayName sets the creator's public name; empty restores the default.
func (m *Listings) SetDisplayName(ctx context.Context, wallet, name string) (crtx.Creator, error) {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > 64 || strings.ContainsAny(name, "\n\r\t") {
		return crtx.Creator{}, crtx.InvalidField("display_name", "must be at most 64 characters on one line")
	}
	return m.setCreator(ctx, wallet, "display name", func(tx crtx.Tx) error { return tx.Catalog.SetCreatorName(ctx, wallet, name) })
}

// setCreator makes wallet a creator if it is none yet, changes it with set,
// and returns its profile as it is then.
func (m *core) setCreator(ctx context.Context, wallet, what string, set func(crtx.Tx) error) (crtx.Creator, error) {
	var c crtx.Creator
	err := m.store.Update(ctx, func(tx crtx.Tx) (err error) {
		if err := tx.Catalog.EnsureCreator(ctx, wallet, m.now()); err != nil {
			return err
		}
		if err := set(tx); err != nil {
			return err
		}
		c, err = tx.Catalog.Creator(ctx, wallet)
		return err
	})
	if err != nil {
		return crtx.Creator{}, internal(what, err)
	}
	return c, nil
}
