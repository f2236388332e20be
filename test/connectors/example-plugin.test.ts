// The example plugin passes `npm run connector:check` as a child process; the check fails careless connectors.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CONTRACT, CONTRACT_OPERATIONS } from '../../connectors/contract.js';
import { scenarios } from '../../connectors/conformance/index.js';
import { docBlocks, expectations, outputMatches } from '../helpers/walkthrough.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
import { fromCents, fromIssuePlastic, fromSetCreditLine, toCents, toIssuePlastic } from '../../examples/acme-core/transformers.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function connectorCheck(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile('npm', ['run', 'connector:check', '--', ...args], { cwd: process.cwd(), timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm run connector:check', () => {
  it('passes the example plugin examples/acme-core and prints a table of scenarios', async () => {
    const run = await connectorCheck('./examples/acme-core/index.ts');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('Conformance of connector acme-core 1.0.0');
    for (const s of scenarios) expect(run.stdout).toMatch(new RegExp(`PASS {9}${escape(s.name)}\\s+\\d+ ms`));
    expect(run.stdout).toContain(`${scenarios.length} passed, 0 failed, 0 not offered`);
    expect(run.stdout).toMatch(/upgradeLimit\s+credit-line\s+write\s+offered\s+\d+ passed/);
  });

  it('passes a connector offering only card operations for those, and reports the rest not offered', async () => {
    const run = await connectorCheck('./examples/acme-core/index.ts', '--options', '{"groups":["cards"]}');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const passed = Number(/(\d+) passed, 0 failed, (\d+) not offered/.exec(run.stdout)?.[1]);
    const notOffered = Number(/(\d+) passed, 0 failed, (\d+) not offered/.exec(run.stdout)?.[2]);
    expect(passed).toBeGreaterThan(5);
    expect(notOffered).toBeGreaterThan(0);
    expect(passed + notOffered).toBe(scenarios.length);
    expect(run.stdout).toMatch(/NOT OFFERED {2}.+\n\s+needs upgradeLimit, which this connector does not offer/);
    // The capability table: each card operation offered (and exercised), every other one not offered.
    for (const op of CONTRACT_OPERATIONS) {
      const row = new RegExp(`\\n  ${op}\\s+${CONTRACT[op].group}\\s+${CONTRACT[op].kind}\\s+${CONTRACT[op].group === 'cards' ? 'offered' : 'not offered'}\\s`);
      expect(run.stdout, op).toMatch(row);
    }
    expect(run.stdout).toMatch(/\n {2}lockCard\s+cards\s+write\s+offered\s+[1-9]\d* passed\n/);
    // docs/connectors.md shows this very run: its `# →` lines hold, counts included.
    const shown = docBlocks('docs/connectors.md').find((b) => b.code.startsWith('npm run connector:check -- ./examples/acme-core/index.ts --options'));
    const [arrow] = expectations(shown!);
    expect(outputMatches(arrow!.text, run.stdout), `${arrow!.text}\n---\n${run.stdout}`).toBeUndefined();
  });

  it('fails a connector that breaks the contract, with a reason per scenario, exit 1', async () => {
    const run = await connectorCheck('./test/connectors/fixtures/careless-connector.ts');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL {9}refuses an invalid kit\s+\d+ ms\n\s+unknown KIT-9999: expected rejected PPCUST_018, got succeeded/);
    expect(run.stdout).toMatch(/FAIL {9}a deadline that expires yields pending or a timeout error, never success/);
    expect(run.stdout).toMatch(/FAIL {9}two concurrent upgrades of one card: exactly one wins/);
    expect(run.stdout).toMatch(/\d+ passed, [1-9]\d* failed/);
  });

  it('refuses options that do not match the schema, naming the field, exit 2', async () => {
    const run = await connectorCheck('./examples/acme-core/index.ts', '--options', '{"latencyMs":-5}');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("options for connector 'acme-core' are invalid: /latencyMs:");
  });

  it('refuses a module that is not a connector definition, exit 2', async () => {
    const run = await connectorCheck('./test/connectors/fixtures/not-a-connector.ts');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not a connector definition: id must be');
    expect(run.stderr).toContain('create must be a function');
  });

  it('says in --help that the core must hold the demo fixtures', async () => {
    const run = await connectorCheck('--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('must hold them');
    expect(run.stdout).toContain('KIT-2101 allocated to ENT-1003');
  });
});

describe('acme-core transformers', () => {
  it('converts amounts to cents and back without floats', () => {
    expect(toCents('75000.5')).toBe(7_500_050n);
    expect(toCents('0.07')).toBe(7n);
    expect(toCents('999999999999999.99')).toBe(99_999_999_999_999_999n);
    expect(toCents('1e3')).toBeNull();
    expect(fromCents(7_500_050n)).toBe('75000.50');
  });

  it("maps Acme's refusals to business codes and unknown ones to ACME_ codes", () => {
    expect(fromSetCreditLine('ENT-1', { ok: false, reason: 'LOWERING_DENIED', text: 'no' })).toEqual({
      status: 'rejected',
      code: 'LIMIT_DECREASE_NOT_ALLOWED',
      message: 'Acme core: no.',
    });
    expect(fromIssuePlastic({ ok: false, reason: 'KIT_RESERVED', text: 'reserved' })).toMatchObject({ code: 'PPCUST_018' });
    expect(fromIssuePlastic({ ok: false, reason: 'FROZEN' as never, text: 'frozen' })).toMatchObject({ code: 'ACME_FROZEN' });
  });

  it('sends the primary address as HOME and a given one as lines', () => {
    const base = { kitNo: 'KIT-1', lockOnUpgrade: true };
    expect(toIssuePlastic({ ...base, communicationAddress: { usePrimaryAddress: true } }, 'k').deliverTo).toBe('HOME');
    expect(
      toIssuePlastic({ ...base, communicationAddress: { address1: '1 Rua', city: 'Lisbon', state: 'LX', country: 'PT', pin: '1000-001' } }, undefined).deliverTo,
    ).toEqual({ lines: ['1 Rua', 'Lisbon', 'LX'], country: 'PT', postcode: '1000-001' });
  });
});
