// Package crtx holds the marketplace's domain: money, environments, ids,
// errors, agents, executions, disputes, the ledger's types and proofs, the
// creator protocol, sign-in messages and the Store interface. It does no I/O:
// the market package is the service that uses these types, the http and web
// packages speak to people and programs, and the store packages keep state
// behind Store.
package crtx
