// A Bazaar client reading crtx's discovery list with the official x402
// libraries (@x402/extensions' withBazaar over @x402/core's
// HTTPFacilitatorClient, which asks CRTX_URL/discovery/resources): it pages
// through every HTTP resource CRTX_PAGE at a time and checks each item as a
// facilitator or buyer would, with the libraries' own validators:
//   - the page: x402Version 2, and the pagination the request asked for;
//   - the item: type "http", x402Version 2, lastUpdated an ISO 8601 string,
//     tags that survive the bazaar's sanitizeTags;
//   - each accepts entry against @x402/core's PaymentRequirementsV2Schema;
//   - extensions.bazaar with validateDiscoveryExtension (info against its
//     own schema, with Ajv) and validateDiscoveryExtensionSpec (the
//     protocol's rules), describing a POST with a JSON body;
//   - the resource itself: the example body POSTed without payment is
//     answered 402, and its PAYMENT-REQUIRED header offers the same accepts.
// It prints one JSON line, {"total", "resources" (the items' URLs in
// order), "problems" (what failed, in words)}, and exits 0 whatever it
// found: the Go test judges it. A failure of the script itself exits
// non-zero.
//
// Environment: CRTX_URL (the marketplace's base URL), CRTX_PAGE (the page
// size, default 20).
import { withBazaar, validateDiscoveryExtension, validateDiscoveryExtensionSpec, sanitizeTags } from '@x402/extensions/bazaar';
import { HTTPFacilitatorClient, decodePaymentRequiredHeader } from '@x402/core/http';
import { PaymentRequirementsV2Schema } from '@x402/core/schemas';

const base = process.env.CRTX_URL;
if (!base) throw new Error('CRTX_URL is not set');
const limit = Number(process.env.CRTX_PAGE || 20);
const client = withBazaar(new HTTPFacilitatorClient({ url: base }));

const problems = [];
const items = [];
let total = 0;
for (let offset = 0; ; ) {
  const page = await client.extensions.bazaar.listResources({ type: 'http', limit, offset });
  if (page.x402Version !== 2) problems.push(`page at ${offset}: x402Version ${page.x402Version}`);
  const p = page.pagination;
  if (!p || p.limit !== limit || p.offset !== offset) problems.push(`page at ${offset}: pagination ${JSON.stringify(p)}`);
  total = p?.total ?? 0;
  items.push(...page.items);
  offset += page.items.length;
  if (page.items.length === 0 || offset >= total) break;
}

for (const item of items) {
  const where = item.resource;
  if (item.type !== 'http' || item.x402Version !== 2) problems.push(`${where}: type ${item.type}, x402Version ${item.x402Version}`);
  if (typeof item.lastUpdated !== 'string' || Number.isNaN(Date.parse(item.lastUpdated))) {
    problems.push(`${where}: lastUpdated ${JSON.stringify(item.lastUpdated)} is not an ISO 8601 time`);
  }
  if (JSON.stringify(sanitizeTags(item.tags)) !== JSON.stringify(item.tags)) problems.push(`${where}: tags ${JSON.stringify(item.tags)} do not survive sanitizeTags`);
  if (!Array.isArray(item.accepts) || item.accepts.length === 0) problems.push(`${where}: no accepts`);
  for (const a of item.accepts ?? []) {
    const r = PaymentRequirementsV2Schema.safeParse(a);
    if (!r.success) problems.push(`${where}: accepts entry ${JSON.stringify(a)}: ${r.error.message}`);
  }
  const ext = item.extensions?.bazaar;
  if (!ext) {
    problems.push(`${where}: no extensions.bazaar`);
    continue;
  }
  for (const [name, check] of [['validateDiscoveryExtension', validateDiscoveryExtension], ['validateDiscoveryExtensionSpec', validateDiscoveryExtensionSpec]]) {
    const r = check(ext);
    if (!r.valid) problems.push(`${where}: ${name}: ${(r.errors ?? []).join('; ')}`);
  }
  const input = ext.info?.input ?? {};
  if (input.method !== 'POST' || input.bodyType !== 'json') problems.push(`${where}: input ${JSON.stringify(input)}`);

  const response = await fetch(where, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(input.body) });
  await response.arrayBuffer();
  const header = response.headers.get('PAYMENT-REQUIRED');
  if (response.status !== 402 || !header) {
    problems.push(`${where}: unpaid POST answered ${response.status}, PAYMENT-REQUIRED ${header}`);
    continue;
  }
  const required = decodePaymentRequiredHeader(header);
  if (JSON.stringify(required.accepts) !== JSON.stringify(item.accepts)) {
    problems.push(`${where}: the 402 accepts ${JSON.stringify(required.accepts)}, the list ${JSON.stringify(item.accepts)}`);
  }
}

console.log(JSON.stringify({ total, resources: items.map((i) => i.resource), problems }));
