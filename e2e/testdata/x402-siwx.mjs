// A payer following its x402 call without an account, with the official
// sign-in-with-x client of @x402/extensions: it reads the challenge crtx
// declared (CRTX_CHALLENGE: JSON of the sign-in-with-x extension, as a 402's
// PAYMENT-REQUIRED or a pending call's "poll" gives it), picks the chain it
// paid on (CRTX_NETWORK), signs it with createSIWxPayload as its wallet,
// and GETs each of CRTX_URLS (comma-separated) with the SIGN-IN-WITH-X
// header encodeSIWxHeader makes. It prints one JSON line: [{"url",
// "status", "body"}] in the order asked, and exits 0 whatever the
// statuses; a failure of the script itself exits non-zero.
//
// Environment: CRTX_CHALLENGE, CRTX_NETWORK, CRTX_URLS, CRTX_PAYER_KEYFILE
// (the payer's key file in the Solana CLI's format).
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { readFileSync } from 'node:fs';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const ext = JSON.parse(env('CRTX_CHALLENGE'));
const network = env('CRTX_NETWORK');
const chain = ext.supportedChains.find((c) => c.chainId === network);
if (!chain) throw new Error(`the challenge names no chain ${network}: ${JSON.stringify(ext.supportedChains)}`);
const signer = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(env('CRTX_PAYER_KEYFILE'), 'utf8'))));
const urls = env('CRTX_URLS').split(',');
// The challenge is bound to the origin it came from: the marketplace's.
const payload = await createSIWxPayload({ ...ext.info, chainId: chain.chainId, type: chain.type, signatureScheme: chain.signatureScheme },
  signer, urls[0]);
const header = encodeSIWxHeader(payload);

const out = [];
for (const url of urls) {
  const res = await fetch(url, { headers: { 'SIGN-IN-WITH-X': header } });
  const text = await res.text();
  let body;
  try { body = JSON.parse(text); } catch { body = text; }
  out.push({ url, status: res.status, body });
}
process.stdout.write(JSON.stringify(out) + '\n');
