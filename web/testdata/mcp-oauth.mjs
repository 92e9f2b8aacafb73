// An MCP host adding crtx as a connector with the official TypeScript
// SDK's own OAuth client (@modelcontextprotocol/client 2.x), run by
// TestOAuthConnectorInTheBrowser against a real crtxd: with no token, the
// SDK finds the metadata from the 401, registers itself dynamically and
// sends its person to the authorization URL. The test's Chromium does the
// person's part (wallet sign-in, consent) and lands on this script's
// loopback callback, from which the SDK exchanges the code. It then lists
// tools and runs an agent with the token, and after the test has moved
// the marketplace's clock past the token's hour, calls again: the SDK
// refreshes the token on the 401 and goes on.
//
// It talks to the test on its standard output, one word a line:
// "authorize <url>" for the browser to open, "expire" when the test may
// move the clock, "done" at its end.
import http from 'node:http';
import readline from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const { CRTX_URL: url, CRTX_AGENT_ID: agent } = process.env;

function check(ok, what, got) {
  if (!ok) throw new Error(`${what}: got ${JSON.stringify(got)}`);
}

// The loopback callback a native host listens on (RFC 8252 §7.3).
let callback;
const callbackParams = new Promise((resolve) => {
  callback = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>Connected</title><p>crtx is connected. You can close this tab.</p>');
    resolve(u.searchParams);
  });
});
await new Promise((r) => callback.listen(0, '127.0.0.1', r));
const redirectUrl = `http://127.0.0.1:${callback.address().port}/callback`;

// An in-memory provider, as a host keeps one per server.
const store = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: 'Interop Host', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  state: () => 'interop-state',
  clientInformation: () => store.client,
  saveClientInformation: (c) => { store.client = c; },
  tokens: () => store.tokens,
  saveTokens: (t) => { store.tokens = t; store.saved = (store.saved ?? 0) + 1; },
  redirectToAuthorization: (u) => { console.log(`authorize ${u}`); },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
  discoveryState: () => store.discovery,
  saveDiscoveryState: (d) => { store.discovery = d; },
};

const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), { authProvider: provider });
  const client = new Client({ name: 'crtx-interop-oauth', version: '1' });
  await client.connect(transport);
  return { client, transport };
};

// No token yet: the SDK discovers, registers and asks for the person.
const first = new StreamableHTTPClientTransport(new URL('/mcp', url), { authProvider: provider });
let refused = false;
try {
  await new Client({ name: 'crtx-interop-oauth', version: '1' }).connect(first);
} catch (e) {
  refused = e?.name === 'UnauthorizedError' || /nauthorized/.test(String(e));
  if (!refused) throw e;
}
check(refused, 'a connection without a token was not sent to authorize', refused);
check(store.client?.client_id?.startsWith('oc_'), 'dynamic registration', store.client);
check(store.discovery?.authorizationServerMetadata?.issuer === url, 'discovered issuer', store.discovery);

const params = await callbackParams;
check(params.get('state') === 'interop-state', 'state', params.get('state'));
await first.finishAuth(params);
check(store.tokens?.access_token?.startsWith('crtx_test_') && store.tokens?.refresh_token, 'tokens', store.tokens);
callback.close();

const { client } = await connect();
const tools = await client.listTools();
check(tools.tools.some((t) => t.name === 'run_agent'), 'tools', tools.tools.map((t) => t.name));
const run = await client.callTool({ name: 'run_agent', arguments: { agent_id: agent, task: 'hello from a connector' } });
check(!run.isError, 'run_agent', run);
const firstToken = store.tokens.access_token;

// The test moves the clock past the access token's hour.
console.log('expire');
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) if (line === 'expired') break;

const again = await client.callTool({ name: 'search_agents', arguments: {} });
check(!again.isError, 'search_agents after expiry', again);
check(store.tokens.access_token !== firstToken, 'the token was not refreshed', store.saved);
await client.close();
console.log('done');
process.exit(0);
