// A wallet paying a crtx deposit with the official Solana Pay library
// (@solana/pay), as a wallet scanning the QR code does: it parses the
// deposit's solana_pay_url with parseURL, builds the transfer with
// createTransfer from what it parsed, signs it with the payer's key and
// sends it. Once the transfer is finalized, it finds it again by the
// reference with findReference and checks it with validateTransfer, as a
// merchant would. TestSolanaPayWallet runs it and asserts what it prints:
// one JSON line on stdout with the fields parseURL read and the signature.
// Any failure exits non-zero with what went wrong.
//
// With CRTX_TRANSACTION_REQUEST_URL (the deposit's transaction_request_url)
// it pays as a wallet does with a Solana Pay transaction request instead:
// it GETs the link's label and icon, fetches the transaction for its
// account with fetchTransaction, signs it and sends it; what the merchant
// checks afterwards is the same.
//
// Environment: CRTX_SOLANA_PAY_URL (the deposit's solana_pay_url),
// CRTX_RPC (the Solana JSON-RPC URL), CRTX_PAYER_KEYFILE (the payer's key
// file in the Solana CLI's format: a JSON array of its 64 secret bytes).
import { parseURL, createTransfer, fetchTransaction, findReference, validateTransfer } from '@solana/pay';
import { Connection, Keypair } from '@solana/web3.js';
import { readFileSync } from 'node:fs';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const url = env('CRTX_SOLANA_PAY_URL');
const connection = new Connection(env('CRTX_RPC'), 'confirmed');
const payer = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(env('CRTX_PAYER_KEYFILE'), 'utf8'))));

const request = parseURL(url);
if (!('recipient' in request)) throw new Error(`parseURL read a transaction request from ${url}`);
const { recipient, amount, splToken, reference, label, message, memo } = request;
if (!amount || !splToken || !reference) throw new Error(`${url}: no amount, spl-token or reference`);

let tx;
let shown = {};
const txURL = process.env.CRTX_TRANSACTION_REQUEST_URL;
if (txURL) {
  // parseURL takes only https links, and the test serves plain http on
  // 127.0.0.1: the same URL over https shows it is a transaction request.
  const parsed = parseURL(txURL.replace(/^solana:http:/, 'solana:https:'));
  if (!('link' in parsed)) throw new Error(`parseURL read a transfer request from ${txURL}`);
  const link = new URL(txURL.slice('solana:'.length));
  const got = await fetch(link, { headers: { Accept: 'application/json' } });
  if (!got.ok) throw new Error(`GET ${link}: ${got.status} ${await got.text()}`);
  shown = await got.json();
  tx = await fetchTransaction(connection, payer.publicKey, link);
} else {
  tx = await createTransfer(connection, payer.publicKey, { recipient, amount, splToken, reference, memo });
}
tx.sign(payer);
const signature = await connection.sendRawTransaction(tx.serialize());

// The deposit is credited once the transfer is finalized; so is it
// looked for here, by polling, which needs no WebSocket.
const deadline = Date.now() + 60_000;
for (;;) {
  const { value: [status] } = await connection.getSignatureStatuses([signature]);
  if (status?.err) throw new Error(`transfer ${signature} failed: ${JSON.stringify(status.err)}`);
  if (status?.confirmationStatus === 'finalized') break;
  if (Date.now() > deadline) throw new Error(`transfer ${signature} not finalized after 60 s: ${JSON.stringify(status)}`);
  await new Promise((r) => setTimeout(r, 200));
}

// The merchant's side: the reference finds the transfer, and the
// transfer pays the request's amount of its token to its recipient,
// with its memo and its references.
const found = await findReference(connection, reference[0], { finality: 'finalized' });
if (found.signature !== signature) throw new Error(`findReference found ${found.signature}, the wallet sent ${signature}`);
await validateTransfer(connection, signature, { recipient, amount, splToken, reference, memo }, { commitment: 'finalized' });

console.log(
  JSON.stringify({
    recipient: recipient.toBase58(),
    amount: amount.toFixed(),
    splToken: splToken.toBase58(),
    reference: reference.map((r) => r.toBase58()),
    label,
    message,
    memo,
    signature,
    found: found.signature,
    shown,
  }),
);
