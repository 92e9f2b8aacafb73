// The official OpenAI client, set up as its README shows, with crtx as its
// base URL: the models, a completion, a stream with usage, errors, and a
// metered agent's completion and stream, bounded by crtx's max_price_usdc
// passed as the client passes any body parameter it does not know.
// Each result is a line: a word, then its JSON.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.CRTX_URL + '/v1', apiKey: process.env.CRTX_KEY, maxRetries: 0 });
const say = (word, v) => console.log(word + ' ' + JSON.stringify(v));
const model = process.env.AGENT;

const models = [];
for await (const m of client.models.list()) models.push(m);
say('models', models);
say('model', await client.models.retrieve(model));

const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'monde' }] });
say('completion', completion);

const stream = await client.chat.completions.create({
  model,
  messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'monde' }],
  stream: true,
  stream_options: { include_usage: true },
});
const pieces = [];
let usage, crtx, finish;
const ids = new Set();
for await (const chunk of stream) {
  ids.add(chunk.id);
  const c = chunk.choices[0];
  if (c?.delta?.content) pieces.push(c.delta.content);
  if (c?.finish_reason) finish = c.finish_reason;
  if (chunk.usage) usage = chunk.usage;
  if (chunk.crtx) crtx = chunk.crtx;
}
say('stream', { pieces, usage, crtx, finish, ids: [...ids] });

try {
  await client.chat.completions.create({ model: 'agt_nobody', messages: [{ role: 'user', content: 'x' }] });
  say('refused', null);
} catch (e) {
  say('refused', { status: e.status, code: e.code, type: e.type, message: e.message });
}

const broken = [];
try {
  const s = await client.chat.completions.create({ model: process.env.BROKEN, messages: [{ role: 'user', content: 'x' }], stream: true });
  for await (const chunk of s) if (chunk.choices[0]?.delta?.content) broken.push(chunk.choices[0].delta.content);
  say('broken', { pieces: broken, error: null });
} catch (e) {
  say('broken', { pieces: broken, error: { code: e.code ?? e.error?.code, message: e.message } });
}

// A metered agent: its usage is the creator's signed usage.
const metered = process.env.METERED;
const bounded = await client.chat.completions.create({
  model: metered, messages: [{ role: 'user', content: 'the sea' }], max_price_usdc: 0.1,
});
say('metered', { usage: bounded.usage, crtx: bounded.crtx });
const ms = await client.chat.completions.create({
  model: metered, messages: [{ role: 'user', content: 'the sea' }], max_price_usdc: 0.1,
  stream: true, stream_options: { include_usage: true },
});
let mUsage, mCrtx;
for await (const chunk of ms) {
  if (chunk.usage) mUsage = chunk.usage;
  if (chunk.crtx) mCrtx = chunk.crtx;
}
say('metered-stream', { usage: mUsage, crtx: mCrtx });
