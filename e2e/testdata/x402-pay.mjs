// A buyer paying crtx's execute endpoint with the official x402 client
// libraries (@x402/fetch, @x402/core, @x402/svm), as an agent with a Solana
// wallet does: it POSTs CRTX_BODY to CRTX_URL, and on the 402 the x402
// client reads the PAYMENT-REQUIRED header, builds the exact scheme's SPL
// transfer (signed by the payer, the fee payer's signature left to the
// server) and sends it again with the PAYMENT-SIGNATURE header. The Go tests
// run it and assert what it prints: one JSON line on stdout.
//
// With CRTX_X402_MODE=pay (the default) the request is sent through
// wrapFetchWithPayment, and the line is {"status", "body" (the parsed JSON
// body, or its text), "paymentResponse" and "paymentRequired" (the decoded
// PAYMENT-RESPONSE and PAYMENT-REQUIRED headers of the last response, or
// null)}. It exits 0 whatever the status: the test judges it.
// With CRTX_X402_MODE=header it POSTs without paying, builds the payment
// for the 402's PAYMENT-REQUIRED with the same client, and prints
// {"paymentRequired" (decoded), "header" (the PAYMENT-SIGNATURE value it
// would send)} without sending it, for the test to send, or replay, itself.
// Any failure of the script itself exits non-zero with what went wrong.
//
// Two settings of @x402/svm 2.27.0 do not fit a local network. Its exact
// client takes only mainnet's, devnet's and testnet's solana: network ids,
// even with rpcUrl set; crtx names a local network solana: and the first 32
// characters of its genesis hash. So the scheme is registered under that id
// (read from CRTX_RPC) through a wrapper that hands it a copy of the
// requirements naming devnet, which the transaction does not depend on:
// the payload's "accepted" is still the server's own entry, real network
// and all. And its spend controls allow only the stablecoins it knows
// (USDC and the like) unless told otherwise; the test mint is none of them,
// so allowedAssets: true lets any asset through.
//
// Environment: CRTX_URL (the execute URL), CRTX_BODY (the JSON body),
// CRTX_RPC (the Solana JSON-RPC URL), CRTX_PAYER_KEYFILE (the payer's key
// file in the Solana CLI's format: a JSON array of its 64 secret bytes),
// CRTX_X402_MODE (pay or header).
import { wrapFetchWithPayment, x402Client, x402HTTPClient, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { createKeyPairSignerFromBytes, createSolanaRpc } from '@solana/kit';
import { readFileSync } from 'node:fs';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const url = env('CRTX_URL');
const body = env('CRTX_BODY');
const rpcUrl = env('CRTX_RPC');
const mode = process.env.CRTX_X402_MODE || 'pay';
if (mode !== 'pay' && mode !== 'header') throw new Error(`CRTX_X402_MODE is ${mode}, not pay or header`);
const signer = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(env('CRTX_PAYER_KEYFILE'), 'utf8'))));

const genesis = await createSolanaRpc(rpcUrl).getGenesisHash().send();
const network = `solana:${genesis.slice(0, 32)}`;
const exact = new ExactSvmScheme(signer, { rpcUrl });
const client = new x402Client()
  .register(network, {
    scheme: exact.scheme,
    createPaymentPayload: (version, requirements, context) =>
      exact.createPaymentPayload(version, { ...requirements, network: SOLANA_DEVNET_CAIP2 }, context),
  })
  .setSpendControls({ allowedAssets: true });
const httpClient = new x402HTTPClient(client);

const request = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body };
const header = (response, name, decode) => {
  const v = response.headers.get(name);
  return v ? decode(v) : null;
};

if (mode === 'header') {
  const response = await fetch(url, request);
  const text = await response.text();
  if (response.status !== 402) throw new Error(`POST ${url} without payment: ${response.status} ${text}`);
  const paymentRequired = httpClient.getPaymentRequiredResponse((name) => response.headers.get(name));
  const payload = await httpClient.createPaymentPayload(paymentRequired);
  const { 'PAYMENT-SIGNATURE': signature } = httpClient.encodePaymentSignatureHeader(payload);
  console.log(JSON.stringify({ paymentRequired, header: signature }));
} else {
  const response = await wrapFetchWithPayment(fetch, httpClient)(url, request);
  const text = await response.text();
  let parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  console.log(
    JSON.stringify({
      status: response.status,
      body: parsed,
      paymentResponse: header(response, 'PAYMENT-RESPONSE', decodePaymentResponseHeader),
      paymentRequired: header(response, 'PAYMENT-REQUIRED', decodePaymentRequiredHeader),
    }),
  );
}
