// The caller side of the REST interface: one marketplace, one credential
// (an API key, or the session of signIn).

import { CrtxError } from './errors.js';
import { signListing } from './listing.js';
import { verifyExecution } from './verify.js';

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => {
    clearTimeout(t);
    reject(signal.reason);
  }, { once: true });
});
const FINAL = new Set(['completed', 'failed', 'disputed']);
const enc = encodeURIComponent;
const query = (q) => {
  const s = new URLSearchParams(Object.entries(q ?? {}).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)])).toString();
  return s ? '?' + s : '';
};

export class Client {
  #fetch;
  #wallet;

  /**
   * @param {string} url the marketplace, e.g. "https://crtx.example"
   * @param {string} [apiKey] an API key (crtx_live_…, crtx_test_…) or a session token
   * @param {{fetch?: typeof fetch}} [options]
   */
  constructor(url, apiKey = '', options = {}) {
    this.url = url.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Signs in with a wallet key: a client acting with the new session, which keeps the key to sign listings. */
  static async signIn(url, wallet, options = {}) {
    const anon = new Client(url, '', options);
    const { message } = await anon.request('POST', '/v1/auth/challenge', { wallet: wallet.publicKey });
    const s = await anon.request('POST', '/v1/auth/session', { wallet: wallet.publicKey, message, signature: await wallet.sign(message) });
    const c = new Client(url, s.session_token, options);
    c.#wallet = wallet;
    return c;
  }

  /** Sends a request and resolves to the parsed JSON answer (the text when raw); any status ≥ 300 rejects with a CrtxError. */
  async request(method, path, body, { headers = {}, raw = false, signal } = {}) {
    const h = { Accept: 'application/json', ...headers };
    if (this.apiKey) h.Authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) h['Content-Type'] = 'application/json';
    const res = await this.#fetch(this.url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), signal });
    const text = await res.text();
    if (res.status >= 300) {
      let e;
      try {
        e = JSON.parse(text).error;
      } catch { /* not an error body */ }
      throw new CrtxError(res.status, e?.code ?? 'unexpected_response', e?.message ?? text.slice(0, 200), {
        executionId: e?.execution_id ?? undefined, requestId: res.headers.get('x-request-id') ?? undefined,
        retryAfter: res.headers.get('retry-after') ?? undefined,
      });
    }
    if (raw) return text;
    return text === '' ? undefined : JSON.parse(text);
  }

  /** /.well-known/crtx.json: the marketplace's keys and public URL. */
  wellKnown() { return this.request('GET', '/.well-known/crtx.json'); }

  /** The catalog: GET /v1/agents with its query (limit, offset, tags, q, sort, environment, …). */
  agents(q) { return this.request('GET', '/v1/agents' + query(q)); }

  /** One agent's listing and statistics. */
  agent(id, environment) { return this.request('GET', `/v1/agents/${enc(id)}` + query({ environment })); }

  /**
   * Runs an agent. params is the API's body ({task, parameters, async,
   * timeout_seconds, max_cost_usdc, webhook_url, private}). Synchronous:
   * the final record (a failed execution rejects with a CrtxError carrying
   * its executionId). Asynchronous: the accepted {execution_id, status},
   * or with wait the final record, polled. Retries (default 2) resend when
   * no answer came, on 503 and while the first attempt is in flight, all
   * with one Idempotency-Key so that nothing is charged twice.
   */
  async execute(agentId, params, { idempotencyKey, retries = 2, wait = false, pollMs = 500, signal } = {}) {
    const key = idempotencyKey ?? (retries > 0 ? `crtx-js-${crypto.randomUUID()}` : undefined);
    const headers = key ? { 'Idempotency-Key': key } : {};
    let backoff = 200;
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.request('POST', `/v1/agents/${enc(agentId)}/execute`, params, { headers, signal });
        return params.async && wait ? this.wait(out.execution_id, { pollMs, signal }) : out;
      } catch (e) {
        // A load balancer's 502 or 504 (not the marketplace's own error body)
        // is a replica gone mid-request: no answer, as a network error.
        const gateway = (e.status === 502 || e.status === 504) && e.code === 'unexpected_response';
        const retryable = !(e instanceof CrtxError) || gateway || e.status === 503 || e.code === 'idempotency_in_progress';
        if (attempt >= retries || !retryable || signal?.aborted) throw e;
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  /** An execution's record. */
  execution(id) { return this.request('GET', `/v1/executions/${enc(id)}`); }

  /** The key's executions: {executions, …page}; q holds limit, offset, status, agent_id, from, to. */
  executions(q) { return this.request('GET', '/v1/executions' + query(q)); }

  /** Polls an execution until it is final. */
  async wait(id, { pollMs = 500, timeoutMs = 10 * 60_000, signal } = {}) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.execution(id);
      if (FINAL.has(r.status)) return r;
      if (Date.now() > until) throw new Error(`crtx: execution ${id} is still ${r.status} after ${timeoutMs / 1000} s`);
      await sleep(pollMs, signal);
    }
  }

  /** The marketplace's signed receipt of a final execution, as its exact text (verifyReceipt reads it). */
  receipt(id) { return this.request('GET', `/v1/executions/${enc(id)}/receipt`, undefined, { raw: true }); }

  /** A ledger transaction. */
  transaction(environment, id) { return this.request('GET', `/v1/ledger/${enc(environment)}/transactions/${enc(id)}`); }

  /** A ledger transaction's inclusion proof (409 not_sealed until its block is sealed). */
  proof(environment, id) { return this.request('GET', `/v1/ledger/${enc(environment)}/transactions/${enc(id)}/proof`); }

  /** A block: {block, transaction_hashes, transactions} (404 block_not_found past the newest). */
  block(environment, height) { return this.request('GET', `/v1/ledger/${enc(environment)}/blocks/${Number(height)}`); }

  /** GET /v1/reserves: {reserves: [...]}, one per environment with a chain, with its newest anchored block (anchored_block). */
  reserves() { return this.request('GET', '/v1/reserves'); }

  /**
   * Calls method on the Solana JSON-RPC endpoint at rpc (through this
   * client's fetch, without its credential) and resolves to its result
   * (null when null); rejects when it cannot be asked or answers an error.
   */
  async solanaCall(rpc, method, params = []) {
    let json;
    try {
      const res = await this.#fetch(rpc, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      json = JSON.parse(await res.text());
    } catch (e) {
      throw new Error(`solana rpc ${rpc}: ${method}: ${e.cause?.message ?? e.message}`);
    }
    if (json?.error) throw new Error(`solana rpc ${rpc}: ${method}: ${json.error.code} ${json.error.message}`);
    return json?.result ?? null;
  }

  /** The bytes at a result's ipfs_url (no credential: the result is public). */
  async content(url) {
    const res = await this.#fetch(new URL(url, this.url + '/').toString());
    if (!res.ok) throw new Error(`crtx: GET ${url}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  /**
   * Checks an execution as docs/verify.md does (steps 1 to 8): resolves to
   * {executionId, ok, checks, anchor, …}. solanaRPC is the Solana JSON-RPC
   * endpoint the anchor is read from (default: the public one of the
   * anchor's cluster; a "custom" cluster, a local validator, needs it).
   */
  verify(id, { solanaRPC } = {}) { return verifyExecution(this, id, { solanaRPC }); }

  /** Makes an API key (session required): {key, …}. */
  createKey(name, environment) { return this.request('POST', '/v1/keys', { name, environment }); }

  /** A one-time nonce for one listing statement, and the marketplace's host it names (session required). */
  listingNonce() { return this.request('POST', '/v1/creator/listing-nonces'); }

  /**
   * Lists an agent (a client of signIn): asks for a nonce, signs the
   * listing statement with the wallet and with agentKey, and sends the
   * listing. The marketplace then tests the endpoint and locks the collateral.
   */
  async createListing(params, { agentKey }) {
    if (!this.#wallet) throw new Error('crtx: createListing needs a client of Client.signIn (it signs with the wallet key)');
    const n = await this.listingNonce();
    const body = { ...params, listing_nonce: n.nonce, marketplace: n.marketplace };
    await signListing(body, { wallet: this.#wallet, agentKey });
    return this.request('POST', '/v1/creator/agents', body);
  }
}
