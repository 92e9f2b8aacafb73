package crtx

import "fmt"

// Links are where a marketplace's views point: the pages under its public
// URL and the Solana explorer of each environment's chain. Every transport
// writes the same addresses from them.
type Links struct {
	// PublicURL is the marketplace's absolute base, without a trailing
	// slash; empty, the addresses are paths.
	PublicURL string
	Chains    map[Environment]Chain
}

// Account is where the marketplace's explorer shows an account.
func (l Links) Account(env Environment, address string) string {
	return fmt.Sprintf("%s/explorer/account/%s?cluster=%s", l.PublicURL, address, env)
}

// Record is the explorer page of an execution's escrow account, where its
// ExecutionRecord is.
func (l Links) Record(e Execution) string {
	return l.Account(e.Environment, EscrowAccount(e).Address)
}

// Listing is the explorer page of an agent's mainnet listing account.
func (l Links) Listing(a Agent) string {
	return l.Account(Mainnet, ListingAccount(a).Address)
}

// MCP is the marketplace's MCP server, the resource its OAuth tokens are
// for.
func (l Links) MCP() string { return l.PublicURL + "/mcp" }

// Chain is the Solana explorer's page of a transaction ("tx") or an
// address ("address") on env's cluster, empty without a chain.
func (l Links) Chain(env Environment, kind, id string) string {
	if c := l.Chains[env]; c != nil {
		return SolanaExplorerURL(c, kind, id)
	}
	return ""
}
