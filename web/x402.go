package web

import (
	"fmt"
	"strings"

	"github.com/crtx-market/crtx/shell"
)

// x402Snippets are the agent page's ways of paying one call per call with
// x402, each a whole program that runs as pasted: with the official
// TypeScript client (@x402/fetch and @x402/svm), the official Python one
// (x402), and the crtx command line; all pay from a Solana key file.
func x402Snippets(url, body, agentID, example string, flags []string) (fetch, python, cli string) {
	fetch = fmt.Sprintf(`// npm install @x402/fetch @x402/svm @solana/kit   (an ES module: save as pay.mjs)
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { readFileSync } from 'node:fs';

const signer = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync('payer.json', 'utf8'))));
const pay = wrapFetchWithPayment(fetch, new x402Client().register('solana:*', new ExactSvmScheme(signer)));
const res = await pay('%s', {
  method: 'POST', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(%s),
});
console.log(res.status, await res.json());`, url, body)
	python = fmt.Sprintf(`# pip install "x402[svm,requests]"
import json, requests
from solders.keypair import Keypair
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.svm import KeypairSigner
from x402.mechanisms.svm.exact import ExactSvmScheme

keypair = Keypair.from_bytes(bytes(json.load(open("payer.json"))))
client = x402ClientSync()
client.register("solana:*", ExactSvmScheme(signer=KeypairSigner(keypair)))
session = wrapRequestsWithPayment(requests.Session(), client)
r = session.post("%s", json=%s)
print(r.status_code, r.json())`, url, body)
	cli = fmt.Sprintf(`crtx run %s %s%s --x402 --keypair payer.json --rpc https://api.devnet.solana.com`, agentID, shell.Quote(example), paramFlags(flags))
	return fetch, python, cli
}

// paramFlags are --param flags, each with a space before it.
func paramFlags(flags []string) string {
	var b strings.Builder
	for _, f := range flags {
		b.WriteString(" --param " + f)
	}
	return b.String()
}
