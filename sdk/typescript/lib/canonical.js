// RFC 8785 (JCS) canonical JSON: what the ledger hashes and the marketplace
// signs. Member names sort by UTF-16 code units (JavaScript's default
// order); strings and numbers are written as JSON.stringify writes them,
// which is what RFC 8785 specifies.

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** @param {unknown} v */
export function canonicalize(v) {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(v)) throw new Error('canonicalize: non-finite number');
      return Object.is(v, -0) ? '0' : JSON.stringify(v);
    case 'string':
      if (LONE_SURROGATE.test(v)) throw new Error('canonicalize: lone surrogate in string');
      return JSON.stringify(v);
    case 'object':
      if (Array.isArray(v)) return '[' + v.map(canonicalize).join(',') + ']';
      return '{' + Object.keys(v).filter((k) => v[k] !== undefined).sort()
        .map((k) => JSON.stringify(k) + ':' + canonicalize(v[k])).join(',') + '}';
    default:
      throw new Error(`canonicalize: cannot encode ${typeof v}`);
  }
}

/** A shallow copy of obj without the named members. */
export function without(obj, ...names) {
  const o = { ...obj };
  for (const n of names) delete o[n];
  return o;
}
