// A caller of crtx's A2A agents written with the official JavaScript A2A
// SDK (@a2a-js/sdk), as a user would write one: it resolves an agent's
// card, checks the card's signature with the SDK's verifier, sends a
// message and waits for the result, streams one, reads the task back, and
// cancels a task that waits for dispatch. Each step is asserted; any failure exits
// non-zero with what went wrong. TestA2AJavaScriptSDK runs it.
//
// Environment: CRTX_URL (the marketplace), CRTX_API_KEY (a devnet key),
// CRTX_AGENT (an agent that answers at once), CRTX_WAITING_AGENT (one
// that holds every call until the test releases it).
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { Role, TaskState, verifyAgentCardSignature } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const base = env('CRTX_URL');
const key = env('CRTX_API_KEY');

function check(ok, what, got) {
  if (!ok) throw new Error(`${what}: got ${JSON.stringify(got, null, 1)}`);
}

// The key goes in the Authorization header the card's security scheme
// names (HTTP Bearer).
const authed = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};

const resolver = new DefaultAgentCardResolver();
const factory = (preferred) =>
  new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: authed }), new RestTransportFactory({ fetchImpl: authed })],
    preferredTransports: [preferred],
    cardResolver: resolver,
  });

// The verifier asks for the key the signature's header names; a client
// trusts only the marketplace's own key set.
async function publicKey(kid, jku) {
  check(jku === `${base}/.well-known/jwks.json`, 'jku', jku);
  const res = await fetch(jku);
  check(res.ok, 'GET jwks', res.status);
  const { keys } = await res.json();
  const jwk = keys.find((k) => k.kid === kid);
  check(jwk && jwk.kty === 'OKP' && jwk.crv === 'Ed25519', `key ${kid}`, keys);
  return jwk;
}
const verify = verifyAgentCardSignature(publicKey);

const textOf = (parts) => parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
const dataOf = (parts) => parts.find((p) => p.content?.$case === 'data')?.content.value;

function userMessage(text, data) {
  const parts = [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }];
  if (data) parts.push({ content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' });
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function send(client, message, returnImmediately) {
  return client.sendMessage({
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  });
}

const agent = env('CRTX_AGENT');
const waitingAgent = env('CRTX_WAITING_AGENT');

// 1. The card, resolved and signed.
const card = await resolver.resolve(`${base}/a2a/${agent}/`);
check(card.name && card.supportedInterfaces?.length === 2, 'card', card);
check(card.supportedInterfaces[0].url === `${base}/a2a/${agent}` && card.supportedInterfaces[0].protocolBinding === 'JSONRPC', 'interfaces', card.supportedInterfaces);
check(card.signatures?.length === 1, 'signatures', card.signatures);
// The verifier canonicalizes through AgentCard.fromJSON, so it is given
// the card as JSON: the resolver's card holds its security schemes in the
// SDK's own form, which fromJSON does not read back, and they would be
// missing from the payload.
const cardURL = `${base}/a2a/${agent}/.well-known/agent-card.json`;
const json = await (await fetch(cardURL)).json();
check(json.name === card.name && json.signatures[0].signature === card.signatures[0].signature, 'card JSON', json);
await verify(json);
// A card whose price was changed after signing does not verify.
const forged = structuredClone(json);
forged.capabilities.extensions[0].params.price_per_call_usdc = '0.000001';
let refused = false;
const debug = console.debug; // where the verifier reports each failed entry
console.debug = () => {};
try {
  await verify(forged);
} catch {
  refused = true;
} finally {
  console.debug = debug;
}
check(refused, 'a card with another price verifies', forged.capabilities.extensions[0].params);
console.log('card: signature verified');

// 2. A blocking message on each binding: the completed task carries the
// result as text and the execution record as data.
for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  const client = await factory(binding).createFromUrl(`${base}/a2a/${agent}/`);
  const res = await send(client, userMessage(`count ${binding}`, { lang: 'en' }), false);
  check(res.id && res.status, 'the answer is a task', res);
  check(res.status.state === TaskState.TASK_STATE_COMPLETED, 'task state', res.status);
  check(res.artifacts.length === 1, 'artifacts', res.artifacts);
  const text = textOf(res.artifacts[0].parts);
  const record = dataOf(res.artifacts[0].parts);
  check(text === `did count ${binding} with {"lang":"en"}`, 'result text', text);
  check(record?.execution_id === res.id && record.status === 'completed' && record.cost_usdc === '0.050000', 'record', record);

  // 3. The task, read back.
  const got = await client.getTask({ tenant: '', id: res.id });
  check(got.id === res.id && got.status.state === TaskState.TASK_STATE_COMPLETED && textOf(got.artifacts[0].parts) === text, 'getTask', got);
  console.log(`${binding}: sent, completed and read back ${res.id}`);

  // The same call streamed: the events end with the completed task's state.
  const states = [];
  let streamed;
  for await (const event of client.sendMessageStream({
    tenant: '',
    message: userMessage(`stream ${binding}`),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
    metadata: undefined,
  })) {
    const payload = event.payload;
    if (payload?.$case === 'task') states.push(payload.value.status.state), (streamed = payload.value);
    if (payload?.$case === 'statusUpdate') states.push(payload.value.status.state);
    if (payload?.$case === 'artifactUpdate') streamed = { ...streamed, artifacts: [payload.value.artifact] };
  }
  check(states.at(-1) === TaskState.TASK_STATE_COMPLETED, 'streamed states', states);
  check(textOf(streamed?.artifacts?.[0]?.parts ?? []) === `did stream ${binding} with {}`, 'streamed result', streamed);
  console.log(`${binding}: streamed ${states.join(' ')}`);
}

// 4. Cancel: the waiting agent holds the only dispatch slot with a first
// task; a second waits for it, submitted, and is cancelled.
const waiting = await factory('JSONRPC').createFromUrl(`${base}/a2a/${waitingAgent}/`);
const first = await send(waiting, userMessage('hold'), true);
check(first.id, 'first task', first);
for (let state = first.status.state; state !== TaskState.TASK_STATE_WORKING; ) {
  check(state === TaskState.TASK_STATE_SUBMITTED, 'first task before it runs', state);
  await new Promise((r) => setTimeout(r, 20));
  state = (await waiting.getTask({ tenant: '', id: first.id })).status.state;
}
const second = await send(waiting, userMessage('wait'), true);
check(second.status.state === TaskState.TASK_STATE_SUBMITTED, 'second task', second.status);
const cancelled = await waiting.cancelTask({ tenant: '', id: second.id, metadata: undefined });
check(cancelled.id === second.id && cancelled.status.state === TaskState.TASK_STATE_CANCELED, 'cancelTask', cancelled.status);
const after = await waiting.getTask({ tenant: '', id: second.id });
check(after.status.state === TaskState.TASK_STATE_CANCELED, 'cancelled task read back', after.status);
// One the agent already works on cannot be cancelled.
let notCancelable;
try {
  await waiting.cancelTask({ tenant: '', id: first.id, metadata: undefined });
} catch (err) {
  notCancelable = err;
}
check(notCancelable instanceof TaskNotCancelableError, 'cancelling a running task', String(notCancelable));
console.log(`cancel: ${second.id} cancelled, ${first.id} refused`);
console.log('ok');
