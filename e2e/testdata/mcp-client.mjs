// An MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk),
// run by TestMCPTypeScriptSDK against a real crtxd: it lists the tools, calls
// each one, and runs an agent as a task through tasks/*. It exits non-zero
// at the first answer that is not what the docs promise.
//
// It talks to the test on its standard output, one word a line: "running"
// when run_agent's progress says the execution runs (the test's agent
// answers only then), "release" when the held execution may finish.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const { CRTX_URL: url, CRTX_API_KEY: key, CRTX_AGENT_ID: agent } = process.env;

function check(ok, what, got) {
  if (!ok) throw new Error(`${what}: got ${JSON.stringify(got)}`);
}

// call calls a tool and returns its answer, which must not be a tool error.
async function call(client, name, args, options) {
  const res = await client.callTool({ name, arguments: args }, undefined, options);
  check(!res.isError, `${name} answered a tool error`, res.content);
  check(res.structuredContent && typeof res.structuredContent === 'object', `${name} has no structured answer`, res);
  return res;
}

const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: 'crtx-interop', version: '1' });
await client.connect(transport);
check(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'the server offers tasks for tools/call', client.getServerCapabilities());

// The whole list is accepted: the SDK checks every tool's schemas.
const { tools } = await client.listTools();
const names = tools.map(t => t.name).sort();
check(names.join(' ') === 'get_agent get_execution run_agent search_agents verify_execution', 'tools', names);

// Each structured answer is checked by the SDK against the tool's output schema.
const page = (await call(client, 'search_agents', { q: 'words', limit: 5 })).structuredContent;
check(page.agents.some(a => a.agent_id === agent), 'search_agents finds the agent', page);

const listing = (await call(client, 'get_agent', { agent_id: agent })).structuredContent;
check(listing.agent_id === agent && listing.input_schema?.type === 'object', 'get_agent', listing);

// run_agent with progress: pending, running, then the final state.
const progress = [];
const ran = await call(client, 'run_agent', { agent_id: agent, task: 'progress', parameters: { lang: 'en' } }, {
  onprogress: p => {
    progress.push(p);
    if (p.message?.endsWith(' is running')) console.log('running');
  },
});
const run = ran.structuredContent;
const text = ran.content[0]?.text;
check(run.status === 'completed' && run.result_hash === 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex'),
  'run_agent: completed, and its result hashes to result_hash', ran);
check(progress.map(p => `${p.progress}/${p.total} ${p.message.split(' ').pop()}`).join(', ') === '1/3 pending, 2/3 running, 3/3 completed',
  'run_agent progress', progress);

const record = (await call(client, 'get_execution', { execution_id: run.execution_id })).structuredContent;
check(record.execution_id === run.execution_id && record.status === 'completed' && record.result === text, 'get_execution', record);

const report = (await call(client, 'verify_execution', { execution_id: run.execution_id })).structuredContent;
check(report.checks.length >= 5 && report.checks.every(c => c.ok), 'verify_execution', report);

// A task: created at once, followed with tasks/get, answered by tasks/result.
const tasks = client.experimental.tasks;
let taskId, result;
for await (const msg of tasks.callToolStream({ name: 'run_agent', arguments: { agent_id: agent, task: 'as a task' } },
  CallToolResultSchema, { task: { ttl: 60000 } })) {
  if (msg.type === 'taskCreated') taskId = msg.task.taskId;
  if (msg.type === 'result') result = msg.result;
  check(msg.type !== 'error', 'the task', msg.error?.message);
}
check(taskId && result && !result.isError && result.structuredContent.execution_id === taskId &&
  result.structuredContent.status === 'completed', 'run_agent as a task', { taskId, result });
const done = await tasks.getTask(taskId);
check(done.status === 'completed', 'tasks/get', done);
const again = await tasks.getTaskResult(taskId, CallToolResultSchema);
check(again.structuredContent.execution_id === taskId && again.content[0]?.text === result.content[0]?.text, 'tasks/result', again);
const listed = await tasks.listTasks();
check(listed.tasks.some(t => t.taskId === taskId && t.status === 'completed'), 'tasks/list', listed);

// tasks/cancel: the agent holds the only dispatch slot with one task, so
// the next waits, pending, and is cancelled.
async function startTask(task) {
  for await (const msg of tasks.callToolStream({ name: 'run_agent', arguments: { agent_id: agent, task } },
    CallToolResultSchema, { task: { ttl: 60000 } })) {
    check(msg.type === 'taskCreated', `task ${task}`, msg);
    return msg.task.taskId;
  }
}
const held = await startTask('hold');
for (let t = await tasks.getTask(held); t.statusMessage !== 'the execution is running'; t = await tasks.getTask(held)) {
  check(t.status === 'working', 'the held task', t);
  await new Promise(resolve => setTimeout(resolve, t.pollInterval));
}
const waiting = await startTask('waits');
check((await tasks.getTask(waiting)).statusMessage === 'the execution is pending', 'the waiting task', await tasks.getTask(waiting));
const cancelled = await tasks.cancelTask(waiting);
check(cancelled.status === 'cancelled', 'tasks/cancel', cancelled);
check((await tasks.getTask(waiting)).status === 'cancelled', 'tasks/get after tasks/cancel', await tasks.getTask(waiting));
console.log('release');
const heldResult = await tasks.getTaskResult(held, CallToolResultSchema);
check(!heldResult.isError && heldResult.structuredContent.status === 'completed', 'the held task, released', heldResult);

await client.close();
