// Package api holds the REST interface's wire shapes: the JSON bodies the
// http package writes and the client package reads, and the mapping of the
// domain's values to them (the New functions), which every transport (REST,
// pages, MCP, A2A, crtxd) shares. It imports only the domain's types, so a
// caller's program builds without the service.
package api
