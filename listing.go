package crtx

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// NewUUID returns a time-ordered (version 7) UUID.
func NewUUID() string {
	// Version 7 (RFC 9562): the first 48 bits are the Unix time in
	// milliseconds, so ids made one after another sort together and a new
	// row's key lands beside the last one's in an index instead of on a
	// random page; the other 74 bits are random.
	var b [16]byte
	rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestEndpoint sends a synthetic request, marked X-Crtx-Test, to a
// creator's endpoint and reports whether it answers in the protocol's shape
// with a signature by key. It moves no money and writes nothing.
func (m *Market) TestEndpoint(ctx context.Context, wallet, endpoint, key string, timeoutSeconds int) TestReport {
	rep := TestReport{Problems: []string{}}
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	pub, err := ParseAddress("signing_public_key", key)
	if err != nil {
		problem("%s", ErrorMessage(err))
	}
	if err := m.cfg.Caller.CheckURL(ctx, "endpoint_url", endpoint); err != nil {
		problem("%s", ErrorMessage(err))
		return rep
	}
	return m.probe(ctx, wallet, endpoint, pub, timeoutSeconds, rep)
}

// probe is TestEndpoint after the URL check.
func (m *Market) probe(ctx context.Context, wallet, endpoint string, pub ed25519.PublicKey, timeoutSeconds int, rep TestReport) TestReport {
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	req := CreatorRequest{ExecutionID: NewUUID(), Task: "crtx reachability test", Parameters: json.RawMessage(`{}`),
		UserPubkey: wallet, TimeoutSeconds: timeoutSeconds}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutSeconds)*time.Second)
	defer cancel()
	start := time.Now()
	reply, err := m.cfg.Caller.Call(cctx, endpoint, Mainnet, true, req)
	rep.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		var ce *CallError
		if !errors.As(err, &ce) {
			m.cfg.Logger.Error("reachability test", "err", err)
			problem("the test request could not be sent")
			return rep
		}
		if ce.Code == CodeInvalidAgentResponse {
			rep.Reachable = true // something answered, just not a reply
		}
		// The detail (a dial error, the resolved address) stays in the log.
		m.cfg.Logger.Info("reachability test", "err", err)
		problem("%s", ce.Message)
		return rep
	}
	rep.Reachable = true
	rep.Status = reply.Status
	if pub == nil {
		return rep
	}
	err = CheckReply(req, reply, pub)
	var rp *ReplyProblem
	switch {
	case err == nil:
		rep.ShapeOK = true
		rep.SignatureOK = reply.Status == "completed"
		if reply.Status == "failed" {
			problem("the endpoint answered failed (%s), so there was no signature to check", *reply.Error)
		}
	case errors.As(err, &rp) && rp.Kind == CodeInvalidSignature:
		rep.ShapeOK = true
		problem("%s", rp.Message)
	default:
		problem("%v", err)
	}
	return rep
}

// passes is the listing rule: a reply of the right shape, completed with a
// valid signature or failed with an error (CONTRACT §6).
func passes(r TestReport) bool {
	return r.Reachable && r.ShapeOK && (r.SignatureOK || r.Status == "failed")
}

// ErrorMessage is the message of an *Error, or the error's text.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// reachable runs the reachability test and turns a failure into 422.
func (m *Market) reachable(ctx context.Context, a Agent) error {
	if err := m.cfg.Caller.CheckURL(ctx, "endpoint_url", a.EndpointURL); err != nil {
		return err
	}
	pub, err := ParseAddress("signing_public_key", a.SigningPublicKey)
	if err != nil {
		return err
	}
	rep := m.probe(ctx, a.Creator, a.EndpointURL, pub, a.TimeoutSeconds, TestReport{Problems: []string{}})
	if !passes(rep) {
		return Errorf(CodeEndpointUnreachable, "the reachability test of %s failed: %s", a.EndpointURL, strings.Join(rep.Problems, "; "))
	}
	return nil
}

// metadataHash commits a listing's details to the ledger without
// publishing what the seed keeps private (the endpoint).
func metadataHash(a Agent) string {
	b, _ := json.Marshal(struct {
		Name, Tagline, Description string
		Tags                       []string
		In, Out                    json.RawMessage
		Price                      USDC
		Endpoint, Key              string
		Timeout                    int
		Status                     AgentStatus
	}{a.Name, a.Tagline, a.Description, a.Tags, a.InputSchema, a.OutputSchema, a.Price, a.EndpointURL, a.SigningPublicKey, a.TimeoutSeconds, a.Status})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func listingData(a Agent) map[string]string {
	return map[string]string{"agent_id": a.ID, "creator": a.Creator, "name": a.Name,
		"price_per_call_usdc": a.Price.String(), "signing_public_key": a.SigningPublicKey,
		"status": string(a.Status), "metadata_hash": metadataHash(a)}
}

// lockCollateral moves amount of the creator's mainnet funds into the
// listing's collateral account.
func (m *Market) lockCollateral(ctx context.Context, tx Tx, a Agent, amount USDC) error {
	wallet := NewAccount(Mainnet, AccountWallet, a.Creator, a.Creator)
	coll := NewAccount(Mainnet, AccountCollateral, a.ID, a.Creator)
	_, err := m.post(ctx, tx, Mainnet, TxCollateralLocked, map[string]string{"agent_id": a.ID, "creator": a.Creator},
		[]Posting{{From: wallet.Address, To: coll.Address, Amount: amount}}, wallet, coll)
	if errors.Is(err, ErrInsufficientFunds) {
		return &shortfall{Mainnet, a.Creator, amount, "your mainnet balance has %[1]s USDC available (%[2]s); the listing needs %[3]s USDC of collateral", ""}
	}
	return err
}

func listingAccount(a Agent) Account { return NewAccount(Mainnet, AccountListing, a.ID, a.Creator) }

// CreateListing lists an agent, all or nothing: validation, the endpoint
// check, the reachability test, collateral locked from the creator's mainnet
// balance, and the AgentListed transaction (CONTRACT §6).
func (m *Market) CreateListing(ctx context.Context, wallet string, p ListingParams) (CreatorAgent, error) {
	a := Agent{ID: "agt_" + RandomBase62(16), Creator: wallet, Status: AgentActive}
	if err := apply(p, &a, true); err != nil {
		return CreatorAgent{}, err
	}
	if err := m.reachable(ctx, a); err != nil {
		return CreatorAgent{}, err
	}
	now := m.now()
	a.CreatedAt, a.UpdatedAt = now, now
	a.Collateral = collateralFor(m.cfg.CollateralTiers, a.Price)
	err := m.store.Update(ctx, func(tx Tx) error {
		if err := tx.EnsureCreator(ctx, wallet, now); err != nil {
			return err
		}
		if err := tx.InsertAgent(ctx, a); err != nil {
			return err
		}
		if err := m.lockCollateral(ctx, tx, a, a.Collateral); err != nil {
			return err
		}
		_, err := m.post(ctx, tx, Mainnet, TxAgentListed, listingData(a), nil, listingAccount(a))
		return err
	})
	m.catalogChanged()
	if err != nil {
		return CreatorAgent{}, internal("create listing", m.explain(ctx, err))
	}
	return m.creatorAgent(ctx, wallet, a.ID)
}

// ownAgent loads one of wallet's listings that is not delisted; anything
// else is agent_not_found, so ids reveal nothing.
func ownAgent(ctx context.Context, tx Tx, wallet, id string) (Agent, error) {
	a, err := tx.Agent(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && (a.Creator != wallet || a.Status == AgentDelisted)) {
		return Agent{}, Errorf(CodeAgentNotFound, "you have no listed agent %q", id)
	}
	return a, err
}

// UpdateListing changes a listing (CONTRACT §6): each change is a
// ListingUpdated transaction; a new endpoint or key is tested again; a price
// in a higher collateral tier locks the difference.
func (m *Market) UpdateListing(ctx context.Context, wallet, id string, p ListingParams) (CreatorAgent, error) {
	if p.Name != nil {
		return CreatorAgent{}, invalidField("name", "cannot change; delist and list again under a new name")
	}
	a, err := Read(ctx, m.store, func(tx Tx) (Agent, error) { return ownAgent(ctx, tx, wallet, id) })
	if err != nil {
		return CreatorAgent{}, internal("update listing", err)
	}
	if p.Status != nil && *p.Status != AgentActive && *p.Status != AgentPaused {
		return CreatorAgent{}, invalidField("status", "must be \"active\" or \"paused\"; DELETE the agent to delist it")
	}
	// edit applies the change to a listing as read.
	edit := func(a *Agent) error {
		if err := apply(p, a, false); err != nil {
			return err
		}
		if p.Status != nil {
			a.Status = *p.Status
		}
		return nil
	}
	before := a
	if err := edit(&a); err != nil {
		return CreatorAgent{}, err
	}
	if a.EndpointURL != before.EndpointURL || a.SigningPublicKey != before.SigningPublicKey {
		if err := m.reachable(ctx, a); err != nil {
			return CreatorAgent{}, err
		}
	}
	// The reachability test takes seconds: the change is applied to the
	// listing as it is when written, so that what others changed meanwhile
	// (an operator's suspension, the collateral) stays as they left it.
	err = m.store.Update(ctx, func(tx Tx) error {
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
		a.UpdatedAt = m.now()
		if need := collateralFor(m.cfg.CollateralTiers, a.Price); need > a.Collateral {
			if err := m.lockCollateral(ctx, tx, a, need-a.Collateral); err != nil {
				return err
			}
			a.Collateral = need
		}
		if err := tx.UpdateAgent(ctx, a); err != nil {
			return err
		}
		data := listingData(a)
		data["changed"] = strings.Join(changed, ",")
		_, err = m.post(ctx, tx, Mainnet, TxListingUpdated, data, nil, listingAccount(a))
		return err
	})
	m.catalogChanged()
	if err != nil {
		return CreatorAgent{}, internal("update listing", m.explain(ctx, err))
	}
	return m.creatorAgent(ctx, wallet, id)
}

func changedFields(a, b Agent) []string {
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
	add("endpoint_url", a.EndpointURL != b.EndpointURL)
	add("signing_public_key", a.SigningPublicKey != b.SigningPublicKey)
	add("timeout_seconds", a.TimeoutSeconds != b.TimeoutSeconds)
	add("status", a.Status != b.Status)
	return out
}

// Delist takes an agent out of the catalog at once (AgentDelisted). Its
// collateral stays locked until the release job returns it.
func (m *Market) Delist(ctx context.Context, wallet, id string) (CreatorAgent, error) {
	err := m.store.Update(ctx, func(tx Tx) error {
		a, err := ownAgent(ctx, tx, wallet, id)
		if err != nil {
			return err
		}
		now := m.now()
		a.Status, a.UpdatedAt, a.DelistedAt = AgentDelisted, now, &now
		if err := tx.UpdateAgent(ctx, a); err != nil {
			return err
		}
		_, err = m.post(ctx, tx, Mainnet, TxAgentDelisted, listingData(a), nil, listingAccount(a))
		return err
	})
	m.catalogChanged()
	if err != nil {
		return CreatorAgent{}, internal("delist", err)
	}
	return m.creatorAgent(ctx, wallet, id)
}

// CreatorAgents lists wallet's own agents, every status included.
func (m *Market) CreatorAgents(ctx context.Context, wallet string) ([]CreatorAgent, error) {
	var out []CreatorAgent
	err := m.store.View(ctx, func(tx Tx) error {
		agents, err := tx.AgentsByCreator(ctx, wallet)
		if err != nil {
			return err
		}
		out = make([]CreatorAgent, 0, len(agents))
		for _, a := range agents {
			it, err := tx.AgentListing(ctx, a.ID, Mainnet)
			if err != nil {
				return err
			}
			out = append(out, m.creatorView(it))
		}
		return nil
	})
	return out, internal("creator agents", err)
}

func (m *Market) creatorAgent(ctx context.Context, wallet, id string) (CreatorAgent, error) {
	var it AgentListItem
	err := m.store.View(ctx, func(tx Tx) (err error) {
		it, err = tx.AgentListing(ctx, id, Mainnet)
		if err == nil && it.Agent.Creator != wallet {
			return Errorf(CodeAgentNotFound, "you have no agent %q", id)
		}
		return err
	})
	if err != nil {
		return CreatorAgent{}, internal("creator agent", err)
	}
	return m.creatorView(it), nil
}

// SetDisplayName sets the creator's public name; empty restores the default.
func (m *Market) SetDisplayName(ctx context.Context, wallet, name string) (CreatorProfile, error) {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > 64 || strings.ContainsAny(name, "\n\r\t") {
		return CreatorProfile{}, invalidField("display_name", "must be at most 64 characters on one line")
	}
	var c Creator
	err := m.store.Update(ctx, func(tx Tx) (err error) {
		if err := tx.EnsureCreator(ctx, wallet, m.now()); err != nil {
			return err
		}
		if err := tx.SetCreatorName(ctx, wallet, name); err != nil {
			return err
		}
		c, err = tx.Creator(ctx, wallet)
		return err
	})
	if err != nil {
		return CreatorProfile{}, internal("display name", err)
	}
	return CreatorProfile{Wallet: wallet, DisplayName: displayName(c), Verified: c.Verified}, nil
}

func displayName(c Creator) string {
	if c.DisplayName == "" {
		return DefaultDisplayName(c.Wallet)
	}
	return c.DisplayName
}
