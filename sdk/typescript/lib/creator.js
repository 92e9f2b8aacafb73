// The creator side: a handler that takes the marketplace's request (body and
// headers) and returns the reply, whatever serves HTTP around it: its node
// member is a listener of Node's http, its fetch member a Fetch API handler.

import { fetchHandler } from './fetch.js';
import { cachedMarketplaceKeys } from './marketplace-key.js';
import { nodeListener } from './node-http.js';
import {
  MAX_BODY, HEADER_AGENT_ID, HEADER_ENVIRONMENT, HEADER_SIGNATURE, HEADER_SIGNING_KEY, HEADER_TEST, HEADER_TIMESTAMP,
  resultHash, signResult, signUsage, verifyRequestSignature,
} from './protocol.js';

const header = (headers, name) => {
  if (typeof headers?.get === 'function') return headers.get(name) ?? '';
  const v = headers?.[name] ?? headers?.[Object.keys(headers ?? {}).find((k) => k.toLowerCase() === name)];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

/**
 * Thrown by a handler's function, says the call failed for its input, not
 * the agent: the caller gets a 400 invalid_input, and the failure is
 * counted apart from the agent's.
 */
export class InvalidInput extends Error {
  constructor(message) {
    super(message);
    this.name = 'InvalidInput';
  }
}

const json = (status, value) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const refuse = (status, error) => json(status, { error });

/**
 * Makes the handler of a creator's service: it runs fn on each request the
 * marketplace sends and answers the signed reply.
 *
 * fn(request, signal) returns the result text, or {result, tokensUsed}; a
 * throw (or a rejected promise) answers failed with its message, and an
 * InvalidInput thrown says the input, not the agent, was at fault. signal
 * aborts when the deadline (a margin before timeout_seconds) passes: the
 * handler answers failed then, whether fn has returned or not.
 *
 * fn may stream instead (an async generator function): each piece it
 * yields goes to the marketplace as it is written, when the request accepts
 * text/event-stream, and the result is the pieces joined, signed; what it
 * returns may give {tokensUsed} (docs/creators.md, "Streaming").
 *
 * Reported tokens are signed (usage_signature); with metered: true, for a
 * metered listing, every completed reply reports and signs them, 0 too
 * (docs/creators.md, "Metered listings").
 */
export function createHandler(key, fn, options = {}) {
  const {
    marketplace, marketplaceKey, acceptUnsigned = false, agentIds = [],
    maxSkewSeconds = 300, marginMs, remember = 10_000, now = Date.now, fetch: fetchFn, metered = false,
  } = options;
  if (!marketplace && !marketplaceKey && !acceptUnsigned) {
    // An agent that forgot the marketplace would serve anyone for free.
    throw new Error('crtx: createHandler needs marketplace (its URL) or marketplaceKey; acceptUnsigned: true is for local tests only');
  }
  const trusted = marketplaceKey ? { keys: async () => [marketplaceKey], refresh: async () => undefined }
    : marketplace ? cachedMarketplaceKeys(marketplace, { fetch: fetchFn, now }) : undefined;
  /** @type {Map<string, Promise<string>>} answers by execution id, oldest first */
  const answers = new Map();

  async function check(headers, body) {
    const ts = header(headers, HEADER_TIMESTAMP);
    if (!/^-?\d+$/.test(ts)) return refuse(401, `missing or malformed X-Crtx-Timestamp`);
    if (Math.abs(now() / 1000 - Number(ts)) > maxSkewSeconds) return refuse(401, 'X-Crtx-Timestamp is too far from now');
    const s = scope(headers);
    const verifies = async (keys) => {
      for (const k of keys) if (await verifyRequestSignature(k, s, ts, body, header(headers, HEADER_SIGNATURE))) return true;
      return false;
    };
    let ok;
    try {
      // A signature none of the kept keys verifies may be by the key the
      // marketplace rotated to: its keys are read again, once a minute at most.
      ok = (await verifies(await trusted.keys())) || (await verifies((await trusted.refresh()) ?? []));
    } catch (e) {
      return refuse(503, `the marketplace key is unavailable: ${e.message}`);
    }
    if (!ok) return refuse(401, 'X-Crtx-Signature does not verify against the marketplace key');
    if (s.signingKey !== key.publicKey) return refuse(403, 'the request is for another signing key (X-Crtx-Signing-Key)');
    if (s.environment !== 'mainnet' && s.environment !== 'devnet') return refuse(403, 'X-Crtx-Environment is neither mainnet nor devnet');
    if (!s.agentId) return s.test ? undefined : refuse(403, 'a request that names no agent (X-Crtx-Agent-Id) must be a test');
    if (agentIds.length > 0 && !agentIds.includes(s.agentId)) return refuse(403, 'the request is for another agent (X-Crtx-Agent-Id)');
    return undefined;
  }

  function claim(id, start) {
    const known = answers.get(id);
    if (known) return known;
    const answer = start();
    answers.set(id, answer);
    while (answers.size > remember) answers.delete(answers.keys().next().value);
    return answer;
  }

  async function run(input, headers, onPiece) {
    const timeoutMs = (input.timeout_seconds > 0 ? input.timeout_seconds : 60) * 1000;
    const margin = marginMs ?? Math.min(Math.max(timeoutMs / 10, 200), 2000);
    const budget = timeoutMs - margin;
    const s = scope(headers);
    const request = Object.freeze({
      executionId: input.execution_id, task: input.task, parameters: input.parameters ?? {},
      userPubkey: input.user_pubkey, timeoutSeconds: input.timeout_seconds,
      agentId: s.agentId, environment: s.environment, test: s.test,
      // A metered listing's call: the most tokens the caller's hold pays for.
      maxTokens: Number.isInteger(input.max_tokens) ? input.max_tokens : undefined,
    });
    const ac = new AbortController();
    let timer;
    const deadline = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ error: `the agent did not finish within ${budget / 1000} s` }), budget);
    });
    let ended = false;
    const work = (async () => {
      const out = await fn(request, ac.signal);
      if (typeof out?.[Symbol.asyncIterator] !== 'function') return out;
      const pieces = [];
      const it = out[Symbol.asyncIterator]();
      for (;;) {
        const step = await it.next();
        if (step.done) return { result: pieces.join(''), tokensUsed: step.value?.tokensUsed };
        if (ended) {
          // Past the deadline: the model's output is no longer wanted.
          await it.return?.();
          return undefined;
        }
        const piece = String(step.value ?? '');
        if (piece === '') continue;
        pieces.push(piece);
        onPiece?.(piece);
      }
    })().then(
      (out) => ({ out }),
      (e) => ({ error: (e instanceof Error ? e.message : String(e)) || 'the agent failed', invalidInput: e instanceof InvalidInput }),
    );
    const o = await Promise.race([work, deadline]);
    ended = true;
    clearTimeout(timer);
    ac.abort();
    const reply = { execution_id: input.execution_id };
    const out = o.out !== undefined && typeof o.out === 'object' && o.out !== null ? o.out : { result: o.out };
    if (o.error === undefined && typeof out.result !== 'string') o.error = 'the agent returned no result text';
    if (o.error !== undefined) {
      const failed = { ...reply, status: 'failed', result: null, result_hash: null, signature: null, error: o.error.replaceAll('\0', '') };
      if (o.invalidInput) failed.error_code = 'invalid_input';
      return JSON.stringify(failed);
    }
    const hash = await resultHash(out.result);
    Object.assign(reply, { status: 'completed', result: out.result, result_hash: hash, signature: await signResult(key, hash) });
    const tokens = Number.isInteger(out.tokensUsed) && out.tokensUsed > 0 ? out.tokensUsed : 0;
    if (tokens > 0 || metered) {
      // Signed: a metered listing is charged from the creator's own word.
      reply.tokens_used = tokens;
      reply.usage_signature = await signUsage(key, input.execution_id, hash, tokens);
    }
    return JSON.stringify(reply);
  }

  /**
   * Answers one request: body as received (bytes, or text), headers as a
   * Headers or a plain object. Resolves to {status, headers, body}.
   */
  async function handle({ method = 'POST', headers, body }) {
    if (method !== 'POST') return { ...refuse(405, 'use POST'), headers: { 'content-type': 'application/json', allow: 'POST' } };
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body ?? new Uint8Array();
    if (bytes.length > MAX_BODY) return refuse(413, 'the request is too large');
    if (trusted) {
      const refused = await check(headers, bytes);
      if (refused) return refused;
    }
    let input;
    try {
      input = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      input = undefined;
    }
    if (typeof input?.execution_id !== 'string' || !input.execution_id) return refuse(400, 'the body is not a creator execution request');
    if (!answers.has(input.execution_id) && accepts(header(headers, 'accept'), 'text/event-stream')) {
      const q = pieceQueue();
      const reply = claim(input.execution_id, () => run(input, headers, q.push));
      return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }, body: events(q, reply) };
    }
    // A retry of the execution gets the first answer, byte for byte, even while it is still running.
    const reply = await claim(input.execution_id, () => run(input, headers));
    return { status: 200, headers: { 'content-type': 'application/json' }, body: reply };
  }

  const handler = { publicKey: key.publicKey, handle };
  return Object.freeze({ ...handler, fetch: fetchHandler(handler), node: nodeListener(handler) });
}

function scope(headers) {
  return {
    agentId: header(headers, HEADER_AGENT_ID), signingKey: header(headers, HEADER_SIGNING_KEY),
    environment: header(headers, HEADER_ENVIRONMENT), test: header(headers, HEADER_TEST) === 'true',
  };
}

function accepts(accept, type) {
  return accept.split(',').some((part) => part.split(';')[0].trim().toLowerCase() === type);
}

// pieceQueue holds the pieces a streaming fn yielded until the answer's
// body sends them.
function pieceQueue() {
  const items = [];
  let wake;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    items,
    poke,
    push: (piece) => {
      items.push(piece);
      poke();
    },
    next: () => (items.length ? Promise.resolve() : new Promise((resolve) => { wake = resolve; })),
  };
}

// events is a streamed answer's body, as Server-Sent Events: a delta for
// each piece as it comes, then the result event with the signed reply. A
// result that came whole (fn returned it) is sent as one delta first, so
// that the deltas joined are always the result.
async function* events(q, reply) {
  let text;
  reply.then((t) => {
    text = t;
    q.poke();
  });
  let n = 0;
  let sent = '';
  for (;;) {
    while (q.items.length > 0) {
      const piece = q.items.shift();
      sent += piece;
      yield `id: ${++n}\nevent: delta\ndata: ${JSON.stringify({ text: piece })}\n\n`;
    }
    if (text !== undefined) break;
    await q.next();
  }
  const r = JSON.parse(text);
  if (r.status === 'completed' && sent === '' && r.result) {
    yield `id: ${++n}\nevent: delta\ndata: ${JSON.stringify({ text: r.result })}\n\n`;
  }
  yield `event: result\ndata: ${text}\n\n`;
}
