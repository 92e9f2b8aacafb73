package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

func (t catalogRows) EnsureCreator(ctx context.Context, wallet string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO creators (wallet, created_at) VALUES (?, ?) ON CONFLICT (wallet) DO NOTHING`, wallet, us(at))
	return err
}

func (t catalogRows) Creator(ctx context.Context, wallet string) (crtx.Creator, error) {
	c := crtx.Creator{Wallet: wallet}
	err := t.queryRow(ctx, `SELECT display_name, verified FROM creators WHERE wallet = ?`, wallet).Scan(&c.DisplayName, &c.Verified)
	return c, notFound(err, "creator")
}

func (t catalogRows) SetCreatorName(ctx context.Context, wallet, name string) error {
	_, err := t.exec(ctx, `UPDATE creators SET display_name = ? WHERE wallet = ?`, name, wallet)
	return err
}

func (t catalogRows) SetCreatorVerified(ctx context.Context, wallet string, verified bool) error {
	_, err := t.exec(ctx, `UPDATE creators SET verified = ? WHERE wallet = ?`, verified, wallet)
	return err
}

const agentColumns = `a.id, a.creator, a.name, a.tagline, a.description, a.tags, a.input_schema, a.output_schema,
	a.pricing_model, a.price, a.endpoint_url, a.signing_public_key, a.key_tx, a.timeout_seconds, a.status, a.collateral,
	a.created_at, a.updated_at, a.suspended_at, a.delisted_at, a.price_per_1k, a.max_price, a.example_task, a.example_parameters`

// agentTargets returns scan targets for agentColumns and a function that
// finishes the agent after the scan.
func agentTargets() (*crtx.Agent, []any, func() error) {
	var a crtx.Agent
	var tags, in, out, exParams string
	var created, updated int64
	var suspended, delisted sql.NullInt64
	targets := []any{&a.ID, &a.Creator, &a.Name, &a.Tagline, &a.Description, &tags, &in, &out,
		&a.PricingModel, &a.Price, &a.EndpointURL, &a.SigningPublicKey, &a.KeyTx, &a.TimeoutSeconds, &a.Status, &a.Collateral,
		&created, &updated, &suspended, &delisted, &a.Per1k, &a.Cap, &a.Example.Task, &exParams}
	return &a, targets, func() error {
		a.InputSchema, a.OutputSchema = json.RawMessage(in), json.RawMessage(out)
		if exParams != "" {
			a.Example.Parameters = json.RawMessage(exParams)
		}
		a.CreatedAt, a.UpdatedAt = fromUS(created), fromUS(updated)
		a.SuspendedAt, a.DelistedAt = fromNullUS(suspended), fromNullUS(delisted)
		return json.Unmarshal([]byte(tags), &a.Tags)
	}
}

func (t *tx) writeAgentIndexes(ctx context.Context, a crtx.Agent) error {
	if _, err := t.exec(ctx, `DELETE FROM agent_tags WHERE agent_id = ?`, a.ID); err != nil {
		return err
	}
	listed := 0
	if a.Status == crtx.AgentActive && a.SuspendedAt == nil {
		listed = 1
	}
	for _, tag := range a.Tags {
		if _, err := t.exec(ctx, `INSERT INTO agent_tags (tag, agent_id, listed) VALUES (?, ?, ?)`, tag, a.ID, listed); err != nil {
			return err
		}
	}
	return t.d.IndexText(ctx, querier{t}, a)
}

func (t catalogRows) InsertAgent(ctx context.Context, a crtx.Agent) error {
	tags, _ := json.Marshal(a.Tags)
	if _, err := t.exec(ctx, `INSERT INTO agents (id, creator, name, tagline, description, tags, input_schema, output_schema,
		pricing_model, price, endpoint_url, signing_public_key, key_tx, timeout_seconds, status, collateral, created_at, updated_at,
		suspended_at, delisted_at, price_per_1k, max_price, example_task, example_parameters)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Creator, a.Name, a.Tagline, a.Description, string(tags), string(a.InputSchema), string(a.OutputSchema),
		a.PricingModel, a.Price, a.EndpointURL, a.SigningPublicKey, a.KeyTx, a.TimeoutSeconds, a.Status, a.Collateral,
		us(a.CreatedAt), us(a.UpdatedAt), nullUS(a.SuspendedAt), nullUS(a.DelistedAt), a.Per1k, a.Cap,
		a.Example.Task, string(a.Example.Parameters)); err != nil {
		return err
	}
	return t.writeAgentIndexes(ctx, a)
}

func (t catalogRows) UpdateAgent(ctx context.Context, a crtx.Agent) error {
	tags, _ := json.Marshal(a.Tags)
	r, err := t.exec(ctx, `UPDATE agents SET name = ?, tagline = ?, description = ?, tags = ?, input_schema = ?,
		output_schema = ?, pricing_model = ?, price = ?, endpoint_url = ?, signing_public_key = ?, key_tx = ?,
		timeout_seconds = ?, status = ?, collateral = ?, updated_at = ?, suspended_at = ?, delisted_at = ?,
		price_per_1k = ?, max_price = ?, example_task = ?, example_parameters = ? WHERE id = ?`,
		a.Name, a.Tagline, a.Description, string(tags), string(a.InputSchema), string(a.OutputSchema), a.PricingModel,
		a.Price, a.EndpointURL, a.SigningPublicKey, a.KeyTx, a.TimeoutSeconds, a.Status, a.Collateral, us(a.UpdatedAt),
		nullUS(a.SuspendedAt), nullUS(a.DelistedAt), a.Per1k, a.Cap, a.Example.Task, string(a.Example.Parameters), a.ID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("agent %s: %w", a.ID, crtx.ErrNotFound)
	}
	return t.writeAgentIndexes(ctx, a)
}

func scanAgent(row interface{ Scan(...any) error }) (crtx.Agent, error) {
	a, targets, finish := agentTargets()
	if err := row.Scan(targets...); err != nil {
		return crtx.Agent{}, err
	}
	return *a, finish()
}

func (t catalogRows) Agent(ctx context.Context, id string) (crtx.Agent, error) {
	a, err := scanAgent(t.queryRow(ctx, `SELECT `+agentColumns+` FROM agents a WHERE a.id = ?`, id))
	if err != nil {
		return crtx.Agent{}, notFound(err, "agent")
	}
	return a, nil
}

func (t catalogRows) AgentTerms(ctx context.Context, id string) (crtx.Agent, error) {
	a := crtx.Agent{ID: id}
	var suspended sql.NullInt64
	err := t.queryRow(ctx, `SELECT creator, name, price, endpoint_url, signing_public_key, key_tx, timeout_seconds, status,
		suspended_at, pricing_model, price_per_1k, max_price FROM agents WHERE id = ?`, id).Scan(&a.Creator, &a.Name,
		&a.Price, &a.EndpointURL, &a.SigningPublicKey, &a.KeyTx, &a.TimeoutSeconds, &a.Status, &suspended,
		&a.PricingModel, &a.Per1k, &a.Cap)
	if err != nil {
		return crtx.Agent{}, notFound(err, "agent")
	}
	a.SuspendedAt = fromNullUS(suspended)
	return a, nil
}

func (t catalogRows) TagCounts(ctx context.Context) (map[string]int, error) {
	// A range of agent_tags_listed alone, as CountAgents by tag.
	return collectMap[string, int](t.query(ctx, `SELECT tag, count(*) FROM agent_tags WHERE listed = 1 GROUP BY tag`))
}

func (t catalogRows) AgentsByCreator(ctx context.Context, wallet string) ([]crtx.Agent, error) {
	rows, err := t.query(ctx, `SELECT `+agentColumns+` FROM agents a WHERE a.creator = ? ORDER BY a.created_at, a.id`, wallet)
	return collect(rows, err, scanAgent)
}

const listingFrom = ` FROM agents a JOIN creators c ON c.wallet = a.creator
	LEFT JOIN agent_stats s ON s.agent_id = a.id AND s.environment = ?`

const listingColumns = agentColumns + `, c.display_name, c.verified,
	coalesce(s.total, 0), coalesce(s.finished, 0), coalesce(s.successful, 0), coalesce(s.time_sum_ms, 0), coalesce(s.disputes, 0), coalesce(s.rejected, 0)`

func scanListing(row interface{ Scan(...any) error }) (crtx.AgentListItem, error) {
	a, targets, finish := agentTargets()
	var it crtx.AgentListItem
	targets = append(targets, &it.Creator.DisplayName, &it.Creator.Verified,
		&it.Stats.Total, &it.Stats.Finished, &it.Stats.Successful, &it.Stats.TimeSumMS, &it.Stats.Disputes, &it.Stats.Rejected)
	if err := row.Scan(targets...); err != nil {
		return it, err
	}
	err := finish()
	it.Agent = *a
	it.Creator.Wallet = a.Creator
	return it, err
}

func (t catalogRows) AgentListing(ctx context.Context, id string, env crtx.Environment) (crtx.AgentListItem, error) {
	it, err := scanListing(t.queryRow(ctx, `SELECT `+listingColumns+listingFrom+` WHERE a.id = ?`, env, id))
	return it, notFound(err, "agent")
}

var words = regexp.MustCompile(`[\p{L}\p{N}]+`)

// Words splits free text into at most 16 lowercase words, so that no
// input is a query syntax error.
func Words(q string) []string { return words.FindAllString(strings.ToLower(q), 16) }

const successRate = `(CASE WHEN coalesce(s.finished, 0) > 0 THEN CAST(s.successful AS DOUBLE PRECISION) / s.finished ELSE 0 END)`

// Reliability scales text relevance by a smoothed success rate, so that a
// record of failures pulls a listing down and a new one starts midway.
const Reliability = `(0.25 + 0.75 * (coalesce(s.successful, 0) + 1.0) / (coalesce(s.finished, 0) + 2.0))`

var orders = map[string]string{
	crtx.SortTotalExecutions: `coalesce(s.total, 0) DESC, a.id`,
	crtx.SortSuccessRate:     successRate + ` DESC, a.id`,
	crtx.SortPriceAsc:        `a.price ASC, a.id`,
	crtx.SortPriceDesc:       `a.price DESC, a.id`,
	crtx.SortCreatedAt:       `a.created_at DESC, a.id`,
}

// agentFilter is the FROM and WHERE of a catalog query and their
// arguments; stats and creator say whether the conditions need those
// joins (a count can do without them otherwise).
func (t *tx) agentFilter(q crtx.AgentQuery) (join, cond string, args []any, stats, creator bool) {
	where := []string{`a.status = 'active'`, `a.suspended_at IS NULL`}
	if ws := Words(q.Q); len(ws) > 0 {
		j, c, arg := t.d.Search(ws)
		join, where, args = j, append(where, c), append(args, arg)
	}
	// One probe of the (tag, agent_id) key per tag and candidate row: a
	// page in some order stops after a handful of rows instead of first
	// gathering every agent with the tags.
	for _, tag := range q.Tags {
		where = append(where, `EXISTS (SELECT 1 FROM agent_tags t WHERE t.tag = ? AND t.agent_id = a.id)`)
		args = append(args, tag)
	}
	if q.MinSuccessRate != nil {
		where, args, stats = append(where, successRate+` >= ?`), append(args, *q.MinSuccessRate), true
	}
	if q.MinExecutions != nil {
		where, args, stats = append(where, `coalesce(s.total, 0) >= ?`), append(args, *q.MinExecutions), true
	}
	if q.VerifiedOnly {
		where, creator = append(where, `c.verified`), true
	}
	return join, ` WHERE ` + strings.Join(where, " AND "), args, stats, creator
}

func (t catalogRows) ListAgents(ctx context.Context, q crtx.AgentQuery) ([]crtx.AgentListItem, error) {
	join, cond, args, _, _ := t.agentFilter(q)
	sort := q.Sort
	if sort == crtx.SortRelevance && join == "" {
		sort = crtx.SortTotalExecutions
	}
	order, ok := orders[sort]
	if sort == crtx.SortRelevance {
		order, ok = t.d.SearchRank()+`, a.id`, true
	}
	if !ok {
		return nil, fmt.Errorf("sort %q is unknown", q.Sort)
	}
	rows, err := t.query(ctx, `SELECT `+listingColumns+listingFrom+join+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(append([]any{q.Environment}, args...), q.Limit, q.Offset)...)
	return collect(rows, err, scanListing)
}

func (t catalogRows) CountAgents(ctx context.Context, q crtx.AgentQuery) (int, error) {
	var n int
	// Filtered by tags alone, or not at all: a range of an index
	// (agent_tags_listed, agents_listed), without reading a listing.
	if len(Words(q.Q)) == 0 && q.MinSuccessRate == nil && q.MinExecutions == nil && !q.VerifiedOnly {
		if len(q.Tags) == 0 {
			err := t.queryRow(ctx, `SELECT count(*) FROM agents WHERE status = 'active' AND suspended_at IS NULL`).Scan(&n)
			return n, err
		}
		query, args := `SELECT count(*) FROM agent_tags t WHERE t.tag = ? AND t.listed = 1`, []any{q.Tags[0]}
		for _, tag := range q.Tags[1:] {
			query += ` AND EXISTS (SELECT 1 FROM agent_tags u WHERE u.tag = ? AND u.agent_id = t.agent_id)`
			args = append(args, tag)
		}
		err := t.queryRow(ctx, query, args...).Scan(&n)
		return n, err
	}
	join, cond, args, stats, creator := t.agentFilter(q)
	from := ` FROM agents a`
	if creator {
		from += ` JOIN creators c ON c.wallet = a.creator`
	}
	if stats {
		from += ` LEFT JOIN agent_stats s ON s.agent_id = a.id AND s.environment = ?`
		args = append([]any{q.Environment}, args...)
	}
	err := t.queryRow(ctx, `SELECT count(*)`+from+join+cond, args...).Scan(&n)
	return n, err
}

func (t catalogRows) AddAgentStats(ctx context.Context, id string, env crtx.Environment, d crtx.AgentStats) error {
	_, err := t.exec(ctx, `INSERT INTO agent_stats (agent_id, environment, total, finished, successful, time_sum_ms, disputes, rejected)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, environment) DO UPDATE SET
		total = agent_stats.total + excluded.total, finished = agent_stats.finished + excluded.finished,
		successful = agent_stats.successful + excluded.successful, time_sum_ms = agent_stats.time_sum_ms + excluded.time_sum_ms,
		disputes = agent_stats.disputes + excluded.disputes, rejected = agent_stats.rejected + excluded.rejected`,
		id, env, d.Total, d.Finished, d.Successful, d.TimeSumMS, d.Disputes, d.Rejected)
	return err
}

func (t catalogRows) ReleasableCollateral(ctx context.Context, cutoff time.Time, limit int) ([]crtx.Agent, error) {
	// Held listings are left out here, not skipped after reading, so that
	// any number of them never hides one that is due. Only mainnet, where
	// the collateral is, can slash it: a devnet execution or dispute holds
	// nothing.
	rows, err := t.query(ctx, `SELECT `+agentColumns+` FROM agents a
		JOIN accounts c ON c.environment = 'mainnet' AND c.kind = 'collateral' AND c.ref = a.id
		WHERE a.status = 'delisted' AND c.balance > 0 AND a.delisted_at <= ?
		AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.agent_id = a.id AND d.status = 'open' AND d.environment = 'mainnet')
		AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.agent_id = a.id AND e.environment = 'mainnet'
			AND (e.completed_at > ? OR (e.completed_at IS NULL AND e.status IN ('pending', 'running'))))
		ORDER BY a.delisted_at, a.id LIMIT ?`, us(cutoff), us(cutoff), limit)
	return collect(rows, err, scanAgent)
}
