package web

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/shell"
	"github.com/crtx-market/crtx/verify"
)

// x402Snippets are the agent page's ways of paying one call per call with
// x402, each a whole program that runs as pasted: with the official
// TypeScript client (@x402/fetch and @x402/svm), the official Python one
// (x402), and the crtx command line; all pay from a Solana key file, on
// the chain rpc serves.
func x402Snippets(url, body, agentID, example string, flags []string, rpc string) (fetch, python, cli string) {
	fetch = fmt.Sprintf(`// npm install @x402/fetch@2.27.0 @x402/svm@2.27.0 @solana/kit@5.5.1   (an ES module: save as pay.mjs)
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { readFileSync } from 'node:fs';

const signer = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync('payer.json', 'utf8'))));
const pay = wrapFetchWithPayment(fetch, new x402Client().register('solana:*', new ExactSvmScheme(signer, { rpcUrl: '%s' })));
const res = await pay('%s', {
  method: 'POST', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(%s),
});
console.log(res.status, await res.json());`, rpc, url, body)
	python = fmt.Sprintf(`# pip install "x402[svm,requests]"
import json, requests
from solders.keypair import Keypair
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.svm import KeypairSigner
from x402.mechanisms.svm.exact import ExactSvmScheme

keypair = Keypair.from_bytes(bytes(json.load(open("payer.json"))))
client = x402ClientSync()
client.register("solana:*", ExactSvmScheme(signer=KeypairSigner(keypair), rpc_url="%s"))
session = wrapRequestsWithPayment(requests.Session(), client)
r = session.post("%s", json=%s)
print(r.status_code, r.json())`, rpc, url, body)
	cli = fmt.Sprintf(`crtx run %s %s%s --x402 --keypair payer.json --rpc %s`, agentID, shell.Quote(example), paramFlags(flags), shell.Quote(rpc))
	return fetch, python, cli
}

// payingRPC is the Solana RPC URL the snippets pay on: that of the chain
// whose way to pay comes first in a PAYMENT-REQUIRED (mainnet's, else
// devnet's), which x402's clients take. A public cluster is named by its
// public endpoint, never by the operator's own URL (it may carry a
// provider's key); a network on this machine (crtxd dev --local-chain) as
// it is; any other by a placeholder to replace.
func payingRPC(chains map[crtx.Environment]crtx.Chain) string {
	c := chains[crtx.Mainnet]
	if c == nil {
		c = chains[crtx.Devnet]
	}
	if public := verify.DefaultSolanaRPC(c.Cluster()); public != "" {
		return public
	}
	if u, err := url.Parse(c.RPC()); err == nil && u.User == nil && u.RawQuery == "" {
		if ip, err := netip.ParseAddr(u.Hostname()); (err == nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return c.RPC()
		}
	}
	return "YOUR_SOLANA_RPC_URL"
}

// paramFlags are --param flags, each with a space before it.
func paramFlags(flags []string) string {
	var b strings.Builder
	for _, f := range flags {
		b.WriteString(" --param " + f)
	}
	return b.String()
}
