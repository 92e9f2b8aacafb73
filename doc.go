// Package crtx is the domain core of the crtx marketplace: wallets, sign-in,
// API keys, the double-entry ledger and its blocks. It knows neither HTTP nor
// SQL; the http package speaks to callers and the store packages keep state
// behind the Store interface defined here.
package crtx
