// Webhook deliveries from a real crtxd, verified unchanged by the two
// libraries receivers use for Standard Webhooks: svix and standardwebhooks.
// Run by TestWebhookLibraries. $CRTX_DELIVERIES names a JSON file of
// {body, headers, secrets, refused}: each delivery must verify with each of
// its secrets (the wallet's "whsec_…" as GET /v1/webhooks/default/secret
// answers it), and must not with each refused one. Exits non-zero at the
// first that does not.
import { readFileSync } from 'node:fs';
import { Webhook as Svix } from 'svix';
import { Webhook as Standard } from 'standardwebhooks';

const deliveries = JSON.parse(readFileSync(process.env.CRTX_DELIVERIES, 'utf8'));
const libraries = { svix: s => new Svix(s), standardwebhooks: s => new Standard(s) };
let n = 0;
for (const [i, d] of deliveries.entries()) {
  for (const [lib, make] of Object.entries(libraries)) {
    for (const secret of d.secrets) {
      // As docs/executions.md shows it: verify throws when the delivery
      // does not verify, and the event is the body (svix 2's verify
      // returns nothing; 1's returned the parsed body).
      make(secret).verify(d.body, d.headers);
      const event = JSON.parse(d.body);
      if (event.data?.execution_id === undefined) throw new Error(`${lib}, delivery ${i}: no execution in ${JSON.stringify(event)}`);
      n++;
    }
    for (const secret of d.refused) {
      let threw = false;
      try { make(secret).verify(d.body, d.headers); } catch { threw = true; }
      if (!threw) throw new Error(`${lib}, delivery ${i}: verified with a secret that does not sign it`);
    }
  }
}
console.log(`verified ${n}`);
