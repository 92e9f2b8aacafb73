#!/usr/bin/env node
// An example crtx agent written with the SDK: it counts the words of the
// task, or of each line with {"per_line": true}, and answers JSON.
//
//   node examples/agent.js --marketplace http://127.0.0.1:8080 [--key agent-key.json] [--port 9103] [--agent-id agt_…]
//
// The key file (Solana CLI format) is created when missing; the public key
// it prints is the listing's signing_public_key.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createHandler, generateSigningKey, signingKeyFromFile } from '@crtx-market/sdk';

/** The agent's work: a function of the request, as createHandler takes it. */
export function wordCount(request) {
  const count = (s) => s.split(/\s+/u).filter(Boolean).length;
  const lines = request.parameters?.per_line ? request.task.split('\n').map(count) : undefined;
  return { result: JSON.stringify({ words: count(request.task), ...(lines && { lines }) }), tokensUsed: 0 };
}

export const inputSchema = {
  type: 'object',
  properties: { per_line: { type: 'boolean', description: 'also count the words of each line' } },
  additionalProperties: false,
};

async function loadOrCreateKey(path) {
  if (existsSync(path)) return signingKeyFromFile(readFileSync(path, 'utf8'));
  const key = await generateSigningKey();
  writeFileSync(path, JSON.stringify([...key.secretKeyBytes()]), { mode: 0o600 });
  return key;
}

async function main() {
  const { values } = parseArgs({
    options: { marketplace: { type: 'string' }, key: { type: 'string', default: 'agent-key.json' }, port: { type: 'string', default: '9103' },
      'agent-id': { type: 'string', multiple: true, default: [] } },
  });
  if (!values.marketplace) {
    console.error('agent.js: --marketplace URL is required: requests the marketplace did not sign are refused');
    process.exit(2);
  }
  const key = await loadOrCreateKey(values.key);
  const handler = createHandler(key, wordCount, { marketplace: values.marketplace, agentIds: values['agent-id'] });
  createServer(handler.node).listen(Number(values.port), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${values.port}/execute, signing_public_key ${key.publicKey}`);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
