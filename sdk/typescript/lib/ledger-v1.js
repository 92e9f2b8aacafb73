// Hashing version 1 (docs/ledger.md, end of "Hashes"), for ledgers sealed
// before version 2: Go's encoding/json with a fixed member order, times in
// microseconds and amounts in micro-USDC.

function goString(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

function micros(time) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(String(time));
  if (!m) throw new Error(`not an RFC 3339 UTC time: ${time}`);
  return BigInt(Date.parse(m[1] + 'Z') / 1000) * 1000000n + BigInt((m[2] || '').padEnd(6, '0').slice(0, 6));
}

/** An amount in USDC (number or decimal text) as micro-USDC. */
export function toMicros(amount) {
  if (typeof amount === 'number') return Math.round(amount * 1e6);
  if (typeof amount === 'string' && /^-?\d+(\.\d+)?$/.test(amount)) return Math.round(Number(amount) * 1e6);
  return NaN;
}

// Go sorts map keys by their bytes.
const byBytes = (a, b) => {
  const x = new TextEncoder().encode(a), y = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

export function transactionV1(tx) {
  const data = '{' + Object.keys(tx.data || {}).sort(byBytes).map((k) => goString(k) + ':' + goString(tx.data[k])).join(',') + '}';
  const postings = '[' + (tx.postings || []).map((p) =>
    `{"from":${goString(p.from)},"to":${goString(p.to)},"amount":${toMicros(p.amount_usdc)}}`).join(',') + ']';
  const accounts = '[' + (tx.accounts || []).map(goString).join(',') + ']';
  return `{"id":${goString(tx.id)},"environment":${goString(tx.environment)},"kind":${goString(tx.kind)},` +
    `"data":${data},"postings":${postings},"accounts":${accounts},"created_at_us":${micros(tx.created_at)}}`;
}

export function blockV1(b) {
  return `{"environment":${goString(b.environment)},"height":${b.height},"prev_hash":${goString(b.prev_hash)},` +
    `"merkle_root":${goString(b.merkle_root)},"tx_count":${b.tx_count},"sealed_at_us":${micros(b.sealed_at)}}`;
}
