// Package e2e is the end-to-end suite: its tests start whole daemons on
// 127.0.0.1 and drive them as their users do, through the client SDK, raw
// HTTP, MCP, A2A, x402, the pages and a local Solana network, checking every
// response against http/openapi.json and every ledger at the end. It holds
// no code of its own; the tests of each package's parts stay with it.
package e2e
