// Types of @crtx-market/sdk. Bodies and records are the REST interface's
// JSON, member names as sent (snake_case); amounts are numbers in USDC.

// What the Node listener uses of http.IncomingMessage and http.ServerResponse,
// so that the types need no @types/node outside Node.
export interface IncomingMessage {
  method?: string;
  headers: Record<string, string | string[] | undefined>;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  destroy(): unknown;
}
export interface ServerResponse {
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

export type Environment = 'mainnet' | 'devnet';

// ---- keys and signatures ---------------------------------------------------

/** An Ed25519 key that signs: a wallet or an agent's signing key. */
export interface SigningKey {
  /** base58 of the 32-byte public key: a wallet address or a signing_public_key. */
  readonly publicKey: string;
  /** base58 of the Ed25519 signature of text (UTF-8) or bytes. */
  sign(message: string | Uint8Array): Promise<string>;
  /** The 64 bytes of a Solana CLI key file (seed, then public key). */
  secretKeyBytes(): Uint8Array;
}

/** A signing key from its 32-byte seed or a 64-byte Solana secret key. */
export function signingKey(secret: Uint8Array | number[]): Promise<SigningKey>;
export function generateSigningKey(): Promise<SigningKey>;
/** A signing key from the text of a Solana CLI key file (a JSON array of 64 bytes). */
export function signingKeyFromFile(text: string): Promise<SigningKey>;
/** Whether signature (base58, "ed25519:" prefix allowed) verifies over message with the base58 public key. */
export function verifySignature(publicKey: string, message: string | Uint8Array, signature: string): Promise<boolean>;

export function base58Encode(bytes: Uint8Array): string;
export function base58Decode(text: string): Uint8Array;
/** RFC 8785 canonical JSON. */
export function canonicalize(value: unknown): string;
/** The CIDv1 (raw, SHA-256) of bytes with this digest. */
export function cidOf(sha256Digest: Uint8Array): string;

// ---- the creator protocol --------------------------------------------------

export interface RequestScope {
  /** "" for the reachability test of a new listing and the Test Execution tool. */
  agentId?: string;
  signingKey: string;
  environment: string;
  test: boolean;
}

/** "sha256:" + hex SHA-256 of the result's UTF-8 bytes. */
export function resultHash(result: string): Promise<string>;
/** "ed25519:" + base58 of the key's signature of the result hash string. */
export function signResult(key: SigningKey, resultHash: string): Promise<string>;
/** The bytes a metered listing's creator signs for a call's usage (docs/creators.md, "Metered listings"). */
export function usageStatement(executionId: string, resultHash: string, tokens: number): string;
/** "ed25519:" + base58 of the key's signature of the usage statement. */
export function signUsage(key: SigningKey, executionId: string, resultHash: string, tokens: number): Promise<string>;
export function requestSigningBytes(scope: RequestScope, timestamp: string, body: string | Uint8Array): Uint8Array;
/** The X-Crtx-Signature the marketplace sends (to play the marketplace in tests). */
export function signRequest(marketplace: SigningKey, scope: RequestScope, timestamp: string, body: string | Uint8Array): Promise<string>;
export function verifyRequestSignature(marketplaceKey: string, scope: RequestScope, timestamp: string, body: string | Uint8Array, signature: string): Promise<boolean>;

/** signing_public_key of the marketplace's /.well-known/crtx.json. */
export function fetchMarketplaceKey(url: string, fetchFn?: typeof fetch): Promise<string>;
export function cachedMarketplaceKey(url: string, options?: { ttlMs?: number; fetch?: typeof fetch; now?: () => number }): () => Promise<string>;
/** signing_public_key and, while the marketplace rotates its key, next_signing_public_key. */
export function fetchMarketplaceKeys(url: string, fetchFn?: typeof fetch): Promise<string[]>;
/** The marketplace's keys, kept for ttlMs; refresh reads them again unless read less than refreshMs ago, and answers them as they stand. */
export function cachedMarketplaceKeys(url: string, options?: { ttlMs?: number; refreshMs?: number; fetch?: typeof fetch; now?: () => number }): { keys(): Promise<string[]>; refresh(): Promise<string[] | undefined> };

/** One task from the marketplace, as the handler gives it to your function. */
export interface AgentRequest {
  readonly executionId: string;
  readonly task: string;
  /** The caller's parameters, valid against the listing's input_schema. */
  readonly parameters: Record<string, unknown>;
  readonly userPubkey: string;
  readonly timeoutSeconds: number;
  /** X-Crtx-Agent-Id; "" for tests that name no agent. */
  readonly agentId: string;
  readonly environment: Environment;
  /** X-Crtx-Test: the reachability test and the Test Execution tool, which nobody pays for. */
  readonly test: boolean;
  /** A metered listing's call: the most tokens the caller's hold pays for (usage above it is not charged). */
  readonly maxTokens?: number;
}

export type AgentOutput = string | { result: string; tokensUsed?: number };

/**
 * Your agent's work. A returned value is completed; a throw is failed, with
 * the error's message. signal aborts at the deadline. An async generator
 * function streams: each piece it yields goes out as it is written, the
 * result is the pieces joined, and its return value may give tokensUsed.
 */
export type AgentFunction =
  | ((request: AgentRequest, signal: AbortSignal) => AgentOutput | Promise<AgentOutput>)
  | ((request: AgentRequest, signal: AbortSignal) => AsyncIterable<string> | AsyncGenerator<string, { tokensUsed?: number } | void, unknown>);

export interface HandlerOptions {
  /** The marketplace's URL: its request-signing key is read from /.well-known/crtx.json and kept for an hour. */
  marketplace?: string;
  /** The marketplace's request-signing key (base58), instead of marketplace. */
  marketplaceKey?: string;
  /** Serve requests nobody signed: local tests only. */
  acceptUnsigned?: boolean;
  /** The listings this service serves: a signed request for another agent is refused (403). */
  agentIds?: string[];
  /** How far X-Crtx-Timestamp may be from now; 300. */
  maxSkewSeconds?: number;
  /** How long before timeout_seconds the handler answers failed; a tenth of it, between 200 ms and 2 s. */
  marginMs?: number;
  /** How many answers are kept for repeated execution ids; 10,000. */
  remember?: number;
  now?: () => number;
  /** The fetch that reads the marketplace key. */
  fetch?: typeof fetch;
  /** A metered listing's service: every completed reply reports and signs its tokens, 0 too. */
  metered?: boolean;
}

export interface HandlerRequest {
  method?: string;
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The body exactly as received: the signature covers its bytes. */
  body: Uint8Array | string;
}

export interface HandlerReply {
  status: number;
  headers: Record<string, string>;
  /** The reply; a stream's (text/event-stream) events as they come. */
  body: string | AsyncIterable<string>;
}

export interface Handler {
  /** The base58 signing key to register as the listing's signing_public_key. */
  readonly publicKey: string;
  /** Answers one request, whatever serves HTTP. */
  handle(request: HandlerRequest): Promise<HandlerReply>;
  /** The Fetch API form: Hono (c.req.raw), Next.js route handlers, Cloudflare Workers, Deno.serve, Bun.serve. */
  readonly fetch: (request: Request) => Promise<Response>;
  /** A listener of Node's http: http.createServer(handler.node). */
  readonly node: (req: IncomingMessage, res: ServerResponse) => void;
}

/** Thrown by an agent's function: the call failed for its input, not the agent (a 400 invalid_input to the caller, counted apart from failures). */
export class InvalidInput extends Error {
  constructor(message: string);
}
/** The handler of a creator's service: runs fn, hashes and signs its result, answers failed on a throw or at the deadline, and answers a repeated execution_id with its first answer. */
export function createHandler(key: SigningKey, fn: AgentFunction, options: HandlerOptions): Handler;
export function fetchHandler(handler: Pick<Handler, 'handle'>): (request: Request) => Promise<Response>;
export function nodeListener(handler: Pick<Handler, 'handle'>): (req: IncomingMessage, res: ServerResponse) => void;

// ---- listings --------------------------------------------------------------

/** The listing statement of an AgentListed or ListingUpdated transaction's data. */
export function listingStatement(kind: 'AgentListed' | 'ListingUpdated', data: Record<string, string>): string;
/** Sets creator_signature and key_signature of a listing body (listing_nonce and marketplace set; replaces too for a change of key). */
export function signListing<T extends Record<string, unknown>>(params: T, keys: { wallet: SigningKey; agentKey: SigningKey; agentId?: string }): Promise<T>;

export interface ListingParams {
  name: string;
  tagline: string;
  description: string;
  tags: string[];
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  pricing_model: 'pay_per_use' | 'metered';
  /** The price of a call; a metered listing's base. */
  price_per_call_usdc: number;
  /** A metered listing's price of 1,000 tokens. */
  price_per_1k_tokens_usdc?: number;
  /** A metered listing's most per call, at least its base. */
  max_price_per_call_usdc?: number;
  endpoint_url: string;
  signing_public_key?: string;
  timeout_seconds?: number;
}

// ---- the caller side -------------------------------------------------------

export class CrtxError extends Error {
  readonly status: number;
  readonly code: string;
  /** The execution an error is about: a failed synchronous execution names it. */
  readonly executionId?: string;
  readonly requestId?: string;
  readonly retryAfter?: string;
}

export interface ExecuteParams {
  task: string;
  parameters?: Record<string, unknown>;
  async?: boolean;
  timeout_seconds?: number;
  max_cost_usdc?: number;
  webhook_url?: string;
  private?: boolean;
}

export interface ExecuteOptions {
  /** Sent on every attempt; a random one when retries is above 0 and none is given. */
  idempotencyKey?: string;
  /** Attempts after the first when no answer came (a load balancer's 502 or 504 included), on 503 and on 409 idempotency_in_progress; 2. */
  retries?: number;
  /** For an async execution: poll until it is final and resolve to the record. */
  wait?: boolean;
  pollMs?: number;
  signal?: AbortSignal;
}

export type ExecutionStatus = 'pending' | 'running' | 'completed' | 'failed' | 'disputed';

export interface ExecutionRecord {
  execution_id: string;
  agent_id: string;
  agent_name: string;
  environment: Environment;
  status: ExecutionStatus;
  result: string | null;
  result_hash: string | null;
  cost_usdc: number;
  creator_amount_usdc: number;
  platform_amount_usdc: number;
  refunded_usdc: number;
  tokens_used: number | null;
  execution_time_ms: number | null;
  initiated_at: string;
  completed_at: string | null;
  on_chain_record: string;
  ipfs_url: string | null;
  error: { code: string; message: string } | null;
  dispute: Record<string, unknown> | null;
  signature: string | null;
  signing_public_key: string;
  listing_transaction: string | null;
  ledger_transaction: string | null;
}

export interface Accepted {
  execution_id: string;
  status: 'pending';
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** A block's anchor: the Solana transaction whose memo names it. */
export interface Anchor {
  signature: string;
  slot: number;
  cluster: string;
}

export type AnchorStatus = 'anchored' | 'not_anchored_yet' | 'not_checked';

export interface VerifyReport {
  executionId: string;
  /** Every check held. */
  ok: boolean;
  checks: Check[];
  /**
   * Step 8: "anchored" when the hash chain leads to a block whose memo the
   * ledger authority signed on Solana; "not_anchored_yet" (no failure) when
   * no block from the execution's on is anchored yet, or the environment
   * has no chain; "not_checked" (no failure either) when a block is anchored
   * on a cluster of no public endpoint and no solanaRPC was given; absent when
   * the verification stopped before or the anchor failed.
   */
  anchor?: AnchorStatus;
  anchorDetail?: string;
  /** The block the anchor names, and the anchor, when anchored or not checked. */
  anchoredBlock?: number;
  anchoredBy?: Anchor;
}

export interface AnchorReport {
  /** Every check ("hash chain", "anchor") held. */
  ok: boolean;
  checks: Check[];
  anchor?: AnchorStatus;
  anchorDetail?: string;
  anchoredBlock?: number;
  anchoredBy?: Anchor;
}

export interface VerifyOptions {
  /** The Solana JSON-RPC endpoint the anchor is read from; default: the public one of the anchor's cluster ("custom" needs it). */
  solanaRPC?: string;
}

export interface WellKnown {
  public_url: string;
  signing_public_key: string;
  ledger_authority_public_key: string;
  [member: string]: unknown;
}

export type Query = Record<string, string | number | boolean | undefined>;

export class Client {
  readonly url: string;
  readonly apiKey: string;
  /** url: the marketplace; apiKey: an API key or a session token. */
  constructor(url: string, apiKey?: string, options?: { fetch?: typeof fetch });
  /** Signs in with a wallet key; the client keeps it to sign listings. */
  static signIn(url: string, wallet: SigningKey, options?: { fetch?: typeof fetch }): Promise<Client>;
  request<T = any>(method: string, path: string, body?: unknown, options?: { headers?: Record<string, string>; raw?: boolean; signal?: AbortSignal }): Promise<T>;
  wellKnown(): Promise<WellKnown>;
  agents(query?: Query): Promise<{ agents: Array<Record<string, any> & { agent_id: string; name: string }>; total: number; limit: number; offset: number }>;
  agent(id: string, environment?: Environment): Promise<Record<string, any> & { agent_id: string; name: string }>;
  execute(agentId: string, params: ExecuteParams & { async?: false }, options?: ExecuteOptions): Promise<ExecutionRecord>;
  execute(agentId: string, params: ExecuteParams & { async: true }, options: ExecuteOptions & { wait: true }): Promise<ExecutionRecord>;
  execute(agentId: string, params: ExecuteParams, options?: ExecuteOptions): Promise<ExecutionRecord | Accepted>;
  execution(id: string): Promise<ExecutionRecord>;
  executions(query?: Query): Promise<{ executions: Array<Record<string, any> & { execution_id: string; status: ExecutionStatus }>; total: number; limit: number; offset: number }>;
  wait(id: string, options?: { pollMs?: number; timeoutMs?: number; signal?: AbortSignal }): Promise<ExecutionRecord>;
  /** The signed receipt's exact text; verifyReceipt reads it. */
  receipt(id: string): Promise<string>;
  transaction(environment: Environment, id: string): Promise<Record<string, any>>;
  proof(environment: Environment, id: string): Promise<Record<string, any>>;
  /** A block and its transactions (404 block_not_found past the newest). */
  block(environment: Environment, height: number): Promise<{ block: Record<string, any>; transaction_hashes: string[]; transactions: Array<Record<string, any>> }>;
  /** GET /v1/reserves: one entry per environment with a chain, with its newest anchored block. */
  reserves(): Promise<{ reserves: Array<Record<string, any> & { environment: Environment; anchored_block: number; cluster: string }> }>;
  /** A JSON-RPC call to a Solana endpoint, through this client's fetch; resolves to its result. */
  solanaCall<T = any>(rpc: string, method: string, params?: unknown[]): Promise<T>;
  content(ipfsUrl: string): Promise<Uint8Array>;
  /** docs/verify.md, steps 1 to 8. */
  verify(id: string, options?: VerifyOptions): Promise<VerifyReport>;
  createKey(name: string, environment: Environment): Promise<{ id: string; key: string; environment: Environment }>;
  listingNonce(): Promise<{ nonce: string; expires_at: string; marketplace: string }>;
  /** Lists an agent (a client of signIn), signing the listing statement with the wallet and agentKey. */
  createListing(params: ListingParams, keys: { agentKey: SigningKey }): Promise<Record<string, any> & { agent_id: string; collateral_usdc: number }>;
}

/** Checks a receipt's text against the marketplace's signing key; resolves to what it states. */
export function verifyReceipt(text: string, marketplaceKey: string): Promise<Record<string, unknown>>;

// ---- the ledger ------------------------------------------------------------

export function transactionHash(tx: Record<string, unknown>): Promise<string>;
export function blockHash(block: Record<string, unknown>): Promise<string>;
export function accountAddress(kind: string, id: string): Promise<string>;
/** undefined when the inclusion proof holds for tx with the authority's key, else what does not. */
export function proofProblem(proof: Record<string, any>, tx: Record<string, any>, authority: string): Promise<string | undefined>;

// ---- the anchor on Solana (docs/verify.md, step 8) -------------------------

export const ANCHORED: 'anchored';
export const NOT_ANCHORED_YET: 'not_anchored_yet';
export const ANCHOR_NOT_CHECKED: 'not_checked';
/** The SPL Memo program an anchor's instruction runs. */
export const MEMO_PROGRAM: string;
/** Solana mainnet's genesis hash: a mainnet block's anchor must be on that cluster. */
export const MAINNET_GENESIS_HASH: string;
/** crtx:<environment>:<height>:<hash> */
export function anchorMemo(block: Record<string, unknown>): string;
/** Step 8 from an execution's block (already checked): the hash chain forward to the first anchored block, and its anchor. */
export function verifyAnchor(client: Client, block: Record<string, any>, authority: string, options?: VerifyOptions): Promise<AnchorReport>;
/** undefined when a transaction getTransaction answered ({slot, err, raw}) holds for block's anchor, else what does not. */
export function anchorProblem(got: { slot: number; err: unknown; raw: Uint8Array }, block: Record<string, any>, authority: string): Promise<string | undefined>;
export interface SolanaTransaction {
  signatures: Uint8Array[];
  messageBytes: Uint8Array;
  /** -1 for a legacy message. */
  version: number;
  header: [number, number, number];
  keys: Uint8Array[];
  blockhash: Uint8Array;
  instructions: Array<{ programIndex: number; accounts: number[]; data: Uint8Array }>;
  lookupTables: number;
}
/** Reads a signed legacy or v0 transaction in Solana's wire format; throws on anything else. */
export function parseSolanaTransaction(raw: Uint8Array): SolanaTransaction;
