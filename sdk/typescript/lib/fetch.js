// The creator handler on the Fetch API: a function from Request to
// Response, for Hono (c.req.raw), Next.js route handlers (export const
// POST), Cloudflare Workers ({ fetch }), Deno.serve and Bun.serve.

import { MAX_BODY } from './protocol.js';

export function fetchHandler(handler) {
  return async (request) => {
    const declared = Number(request.headers.get('content-length') ?? 0);
    if (declared > MAX_BODY) return new Response('{"error":"the request is too large"}', { status: 413, headers: { 'content-type': 'application/json' } });
    const body = request.method === 'POST' ? new Uint8Array(await request.arrayBuffer()) : undefined;
    const r = await handler.handle({ method: request.method, headers: request.headers, body });
    return new Response(streamed(r.body), { status: r.status, headers: r.headers });
  };
}

// streamed is a streamed answer's body (an async iterable of text) as a
// ReadableStream, each piece sent as it comes; any other body as it is.
function streamed(body) {
  if (typeof body?.[Symbol.asyncIterator] !== 'function') return body;
  const it = body[Symbol.asyncIterator]();
  const utf8 = new TextEncoder();
  return new ReadableStream({
    async pull(c) {
      const { value, done } = await it.next();
      if (done) c.close();
      else c.enqueue(utf8.encode(value));
    },
    cancel() {
      it.return?.();
    },
  });
}
