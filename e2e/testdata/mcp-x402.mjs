// A buyer without a crtx account paying an agent over MCP with x402, as an
// agent with a Solana wallet does: the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk) talks to crtxd's open endpoint /mcp/x402, and
// the official x402 client libraries (@x402/core, @x402/svm) build the
// payment from the PaymentRequired that run_agent answers, which goes back
// in _meta["x402/payment"] of the same call, as x402's MCP transport says
// (specs/transports-v2/mcp.md). Run by TestMCPX402TypeScriptSDK, which
// asserts what it prints: one JSON line on stdout,
//
//   {"tools": [names], "found": bool, "listing": get_agent's answer,
//    "unpaid": the call without payment, "paid": the call with it,
//    "replayed": the same payment sent again for another call,
//    "second": a new payment sent at once (the test may bound payments)}
//
// each call as the SDK returned it (content, structuredContent, isError,
// _meta). It exits non-zero only when the script itself fails.
//
// The Solana scheme is registered as x402-pay.mjs registers it, for the
// same two reasons (see its header): the local network's id, and the test
// mint.
//
// Environment: CRTX_URL (the marketplace), CRTX_AGENT_ID, CRTX_RPC (the
// Solana JSON-RPC URL), CRTX_PAYER_KEYFILE (the payer's key file in the
// Solana CLI's format).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { x402Client } from '@x402/core/client';
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
const agent = env('CRTX_AGENT_ID');
const rpcUrl = env('CRTX_RPC');
const signer = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(env('CRTX_PAYER_KEYFILE'), 'utf8'))));

const genesis = await createSolanaRpc(rpcUrl).getGenesisHash().send();
const network = `solana:${genesis.slice(0, 32)}`;
const exact = new ExactSvmScheme(signer, { rpcUrl });
const payments = new x402Client()
  .register(network, {
    scheme: exact.scheme,
    createPaymentPayload: (version, requirements, context) =>
      exact.createPaymentPayload(version, { ...requirements, network: SOLANA_DEVNET_CAIP2 }, context),
  })
  .setSpendControls({ allowedAssets: true });

// No Authorization header: the endpoint is open.
const client = new Client({ name: 'crtx-x402-interop', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/x402', url)));

// The SDK checks every tool's schemas as it lists them, and each call's
// structuredContent against its tool's output schema.
const { tools } = await client.listTools();
const page = (await client.callTool({ name: 'search_agents', arguments: { limit: 100 } })).structuredContent;
const listing = (await client.callTool({ name: 'get_agent', arguments: { agent_id: agent } })).structuredContent;

const args = { agent_id: agent, task: 'hello' };
const unpaid = await client.callTool({ name: 'run_agent', arguments: args });
// As a client of the transport reads it: structuredContent first.
const required = unpaid.structuredContent ?? JSON.parse(unpaid.content[0].text);
const payload = await payments.createPaymentPayload(required);
const withPayment = (p) => client.callTool({ name: 'run_agent', arguments: args, _meta: { 'x402/payment': p } }, undefined, { timeout: 60000 });
const paid = await withPayment(payload);
const replayed = await client.callTool({ name: 'run_agent', arguments: { ...args, task: 'another' }, _meta: { 'x402/payment': payload } }, undefined, { timeout: 60000 });
const second = await withPayment(await payments.createPaymentPayload(required));

console.log(JSON.stringify({
  tools: tools.map((t) => t.name).sort(),
  found: page.agents.some((a) => a.agent_id === agent),
  listing,
  unpaid,
  paid,
  replayed,
  second,
}));
await client.close();
