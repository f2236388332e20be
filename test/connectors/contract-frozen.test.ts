// The connector contract, frozen: what connector authors build against (connectors/contract.ts: each core
// operation's name, group, kind, input and result, the module's exports, interfaces and type aliases, and the
// business codes a refusal carries), as test/connectors/__snapshots__/contract.json holds it (decision 0260).
// A deliberate change rewrites the snapshot with `npm run generate` in the same commit, where a reviewer reads
// it; a breaking change to a connector's behaviour gets a new versioned connector id instead.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Preferences } from '../../schemas/cards.js';
import { CONTRACT_SNAPSHOT, connectorContract, type ConnectorContract } from '../../scripts/connector-contract.js';
import { ROOT, staleMessage } from '../../scripts/generate.js';

const HOW = `${staleMessage([CONTRACT_SNAPSHOT])} if the change to the connector contract is deliberate (a breaking one gets a new connector id)`;

describe('the frozen connector contract', async () => {
  const current = await connectorContract();
  const frozen = JSON.parse(readFileSync(join(ROOT, CONTRACT_SNAPSHOT), 'utf8')) as ConnectorContract;

  it('has the frozen operations: names, groups, kinds, inputs and results', () => {
    expect(Object.keys(current.operations)).toContain('upgradeLimit');
    expect(current.operations, HOW).toEqual(frozen.operations);
  });

  it("the contract module's exports, interfaces (context, definition, deps, secrets) and type aliases (result, connector) are unchanged", () => {
    expect(current.types.ConnectorContext).toMatchObject({ tenantId: 'string', signal: 'AbortSignal' });
    expect(current.types['OperationResult<T>']).toContain("{ status: 'rejected'; code: string; message: string; }");
    expect(current.exports, HOW).toEqual(frozen.exports);
    expect(current.types, HOW).toEqual(frozen.types);
  });

  it('the business codes a connector refuses with are unchanged', () => {
    expect(current.businessCodes).toContain('PPCUST_018');
    expect(current.businessCodes, HOW).toEqual(frozen.businessCodes);
  });

  it('a wire schema an operation shares with the API is frozen by value: a change to it fails the freeze', async () => {
    // Preferences (schemas/cards.ts) is updatePreferences' input and getPreferences' result.
    const properties = (Preferences as unknown as { properties: Record<string, unknown> }).properties;
    properties.probe = { type: 'string' };
    try {
      const changed = await connectorContract();
      expect(changed.operations).not.toEqual(frozen.operations);
      expect(JSON.stringify(changed.operations.updatePreferences)).toContain('"probe"');
    } finally {
      delete properties.probe;
    }
    expect((await connectorContract()).operations).toEqual(frozen.operations);
  });
});
