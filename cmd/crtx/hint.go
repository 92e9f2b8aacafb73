package main

import (
	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// hint is what to try after an error the marketplace answered, for the
// errors a first hour runs into; "" when the message says enough.
func (c *cli) hint(ce *client.Error) string {
	switch ce.Code {
	case crtx.CodeInvalidAPIKey:
		if c.keySent {
			// Three places can hold a key; the one that won is the one to fix.
			return "the API key used came from " + c.apiKeyFrom + "; run 'crtx login' to sign in with your wallet and save a new key, or list yours with 'crtx keys list'"
		}
	case crtx.CodeAgentNotFound:
		return "see the agents there are with 'crtx agents list'"
	case crtx.CodeChainNotConfigured:
		if c.env != "" {
			other := crtx.Devnet
			if c.env == crtx.Devnet {
				other = crtx.Mainnet
			}
			return "this command used " + string(c.env) + " (--environment, else your API key's); if the marketplace has a chain for " + string(other) + ", add --environment " + string(other)
		}
	}
	return ""
}
