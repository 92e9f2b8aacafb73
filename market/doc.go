// Package market is the marketplace service: listings and the catalog,
// executions from charge to settlement, disputes, funding, the ledger's
// postings and blocks, and the background jobs that finish work after a
// crash. Each public method of Market owns one store transaction.
package market
