// A bank integrator's client on the SDK (@cardline/sdk, docs/sdk.md): log in (the SDK fetches the tenant's
// gateway key and sends the password as a JWE), send a whole request body encrypted (Content-Type:
// application/jose) and a card upgrade whose address lines are encrypted fields. Every request and its answer
// is printed by the fetch handed to the SDK (the token never is).
//
//   CARDLINE_PASSWORD=... npx tsx examples/client/encrypt-request.ts \
//     --gateway http://localhost:8080 --tenant demo --username integration \
//     --entity ENT-1001 --amount 75000.00 --kit KIT-2001
import { parseArgs } from 'node:util';
import { Cardline, CardlineError, isPending } from '@cardline/sdk';

const { values: args } = parseArgs({
  options: {
    gateway: { type: 'string', default: 'http://localhost:8080' },
    tenant: { type: 'string', default: 'demo' },
    username: { type: 'string', default: 'integration' },
    entity: { type: 'string', default: 'ENT-1001' },
    amount: { type: 'string', default: '75000.00' },
    kit: { type: 'string', default: 'KIT-2001' },
  },
});
const password = process.env.CARDLINE_PASSWORD;
if (!password) {
  console.error('Set CARDLINE_PASSWORD to the user password.');
  process.exit(2);
}

/** Node's fetch, printing each request and its answer; a token is a credential: it is used, never printed. */
const printing: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const path = new URL(String(input)).pathname;
  const text = await res.clone().text();
  console.log(`${init?.method ?? 'GET'} ${path} → ${res.status} ${res.ok && path === '/api/authenticate' ? '(token received)' : text}`);
  return res;
};

const cl = new Cardline({ baseUrl: args.gateway, tenant: args.tenant, fetch: printing });
try {
  // 1-2. GET /api/keys, then POST /api/authenticate with the password as a JWE to the active key.
  await cl.login(args.username, password);

  // 3. A whole body encrypted: the JSON text is the JWE's plaintext; the route answers as it would to the JSON.
  const limit = await cl.creditLimit.upgrade({ entityId: args.entity, amount: args.amount }, { encryptBody: true });

  // 4. Encrypted fields in a plain JSON body: the address lines, each its own JWE (spec 5.3 rule 2).
  const upgrade = await cl.card.upgradePhysical(
    {
      kitNo: args.kit,
      entityId: args.entity,
      communicationAddress: { address1: '1 Rua Augusta', address2: '3rd floor', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-053' },
    },
    { encryptFields: true },
  );
  // A 202 is not done: the core has not confirmed it yet.
  process.exit(isPending(limit) || isPending(upgrade) ? 1 : 0);
} catch (err) {
  // Refusals are typed (CardlineEnvelopeError, CardlineProblemError); the answer was printed above.
  console.error(err instanceof CardlineError ? `${err.name} ${err.status}: ${err.message}` : err);
  process.exit(1);
}
