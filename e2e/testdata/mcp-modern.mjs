// An MCP client of protocol 2026-07-28 on the official TypeScript SDK
// (@modelcontextprotocol/client 2.x) with the official Tasks extension's
// requester (@modelcontextprotocol/ext-tasks), run by TestMCPModernSDK
// against a real crtxd: it discovers the server (no initialize, no
// session), lists and calls tools, runs an agent as a task, retries that
// run with its idempotency key as after a broken stream, and cancels a
// pending task. Its task traffic goes to a second replica ($CRTX_URL2)
// while the rest goes to the first: no request needs the replica of the
// one before. It exits non-zero at the first answer that is not what the
// docs promise.
//
// It talks to the test on its standard output, one word a line:
// "release" when the held execution may finish.
import { createHash } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const { CRTX_URL: url, CRTX_URL2: url2, CRTX_API_KEY: key, CRTX_AGENT_ID: agent } = process.env;
const version = '2026-07-28';
const tasksExt = 'io.modelcontextprotocol/tasks';
const info = { name: 'crtx-interop-modern', version: '1' };
const capabilities = { extensions: { [tasksExt]: {} } };

function check(ok, what, got) {
  if (!ok) throw new Error(`${what}: got ${JSON.stringify(got)}`);
}

function connect(caps) {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client(info, { capabilities: caps, versionNegotiation: { mode: { pin: version } } });
  return client.connect(transport).then(() => client);
}

// The SDK's Client does not carry the extension's methods on this protocol
// (its wire codec knows only the core ones), so the Tasks requester takes
// a host's dispatcher: this one POSTs each request to the second replica
// with the headers the Streamable HTTP transport of 2026-07-28 requires
// (MCP-Protocol-Version, Mcp-Method, and Mcp-Name for tools/call and
// tasks/*), and reads the answer from JSON or an event stream.
let ids = 0;
async function dispatch(bare, options) {
  const request = { jsonrpc: '2.0', id: ++ids, ...bare };
  const headers = {
    'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${key}`, 'MCP-Protocol-Version': version, 'Mcp-Method': request.method,
    ...(options?.headers ?? {}),
  };
  const name = request.params?.name ?? request.params?.taskId;
  if (name !== undefined) headers['Mcp-Name'] = name;
  const res = await fetch(new URL('/mcp', url2), { method: 'POST', headers, body: JSON.stringify(request), signal: options?.signal });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return JSON.parse(text);
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const msg = JSON.parse(line.slice(6));
    if (msg.id === request.id) return msg;
  }
  throw new Error(`no answer to ${request.method} in ${text}`);
}

const client = await connect(capabilities);
check(client.getProtocolEra() === 'modern', 'the protocol era (server/discover)', client.getProtocolEra());
const caps = client.getServerCapabilities();
check(caps?.extensions?.[tasksExt] && !caps.tasks, 'the server offers the Tasks extension, not 2025 tasks', caps);

const { tools } = await client.listTools();
check(tools.map(t => t.name).sort().join(' ') === 'get_agent get_execution run_agent search_agents verify_execution', 'tools', tools);
const page = (await client.callTool({ name: 'search_agents', arguments: { q: 'words', limit: 5 } })).structuredContent;
check(page.agents.some(a => a.agent_id === agent), 'search_agents finds the agent', page);

// A client without the extension runs synchronously: the call answers the
// run, with progress at each change of state.
const plain = await connect({});
const progress = [];
const ran = await plain.callTool({ name: 'run_agent', arguments: { agent_id: agent, task: 'in one call' } },
  { onprogress: p => progress.push(`${p.progress}/${p.total} ${p.message.split(' ').pop()}`) });
check(!ran.isError && ran.structuredContent.status === 'completed', 'run_agent without Tasks', ran);
// The running state may pass between two reads: it is seen or not.
check(['1/3 pending, 2/3 running, 3/3 completed', '1/3 pending, 3/3 completed'].includes(progress.join(', ')),
  'run_agent progress on 2026-07-28', progress);

const session = createTaskSessionFromClient(client, {
  endpointId: 'crtx-test', rawDispatch: dispatch,
  v2RequestFraming: { protocolVersion: version, clientInfo: info, clientCapabilities: capabilities },
});

// A paid run as a task, followed with tasks/get until its result.
async function runAsTask(args) {
  const execution = await session.callTool('run_agent', { agent_id: agent, ...args });
  check(execution.kind === 'task', 'run_agent with Tasks answers a task', execution.kind);
  const { outcome } = await execution.settle();
  check(outcome.status === 'completed' && !outcome.result.isError, `the task of ${args.task}`, outcome);
  return { taskId: execution.handle.taskId, result: outcome.result };
}
const first = await runAsTask({ task: 'as a task', idempotency_key: 'modern-1' });
const text = first.result.content[0]?.text;
const out = first.result.structuredContent;
check(out.execution_id === first.taskId && out.result_hash === 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex'),
  'the task is the execution, and its result hashes to result_hash', first.result);
// The same call again, as a client does whose stream broke before the
// answer (2026-07-28 has no resumption): the same execution, paid once.
const again = await runAsTask({ task: 'as a task', idempotency_key: 'modern-1' });
check(again.taskId === first.taskId, 'a retry with the same idempotency key', again);

// The held run takes the only dispatch slot; the next stays pending until
// cancelled, and is refunded.
const held = await session.callTool('run_agent', { agent_id: agent, task: 'hold' });
const pending = await session.callTool('run_agent', { agent_id: agent, task: 'cancel me' });
check(held.kind === 'task' && pending.kind === 'task', 'two tasks', [held.kind, pending.kind]);
const task = session.task(pending.handle.taskId);
await task.cancel();
let view = await task.snapshot();
for (let i = 0; view.status === 'working' && i < 100; i++) {
  await new Promise(r => setTimeout(r, 50));
  view = await task.snapshot();
}
check(view.status === 'cancelled', 'tasks/cancel of a pending run', view);
console.log('release');
const { outcome } = await held.settle();
check(outcome.status === 'completed', 'the held run', outcome);

// tasks/update of a run that asks nothing is acknowledged; an unknown task
// is an error.
await session.task(held.handle.taskId).updateJson({});
let unknown;
try { await session.task('no-such-task').snapshot(); } catch (e) { unknown = e; }
check(unknown, 'tasks/get of an unknown task is an error', unknown);

await session.close();
await plain.close();
await client.close();
console.log('done');
