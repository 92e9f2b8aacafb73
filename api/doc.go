// Package api holds the REST interface's wire shapes: the JSON bodies the
// http package writes and the client package reads. It imports only the
// domain's types, so a caller's program builds without the service.
package api
