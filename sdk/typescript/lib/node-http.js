// The creator handler as a listener of Node's http (and https, http2
// compatibility) servers: http.createServer(nodeListener(handler)).

import { MAX_BODY } from './protocol.js';

export function nodeListener(handler) {
  return (req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        send(res, { status: 413, headers: { 'content-type': 'application/json' }, body: '{"error":"the request is too large"}' });
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return;
      const body = new Uint8Array(size);
      let off = 0;
      for (const c of chunks) {
        body.set(c, off);
        off += c.length;
      }
      handler.handle({ method: req.method, headers: req.headers, body }).then(
        (r) => send(res, r).catch(() => res.destroy()),
        (e) => send(res, { status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: String(e?.message ?? e) }) }),
      );
    });
  };
}

async function send(res, r) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(r.status, r.headers);
  if (typeof r.body?.[Symbol.asyncIterator] !== 'function') {
    res.end(r.body);
    return;
  }
  // A stream: each piece written as it comes; a marketplace that hung up
  // is written to no more, and the answer waits for its retry.
  for await (const chunk of r.body) {
    if (res.destroyed) break;
    res.write(chunk);
  }
  res.end();
}
