// The layer rules (.dependency-cruiser.cjs) fail on a wrong import: one planted per rule, in a copy of the
// layout made in a temporary directory (the working tree is never touched), cruised with the rules and
// options `npm run lint` runs; and docs/architecture.md names every rule.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const CONFIG_FILE = join(ROOT, '.dependency-cruiser.cjs');
const config = createRequire(import.meta.url)(CONFIG_FILE) as IConfiguration;
const ruleNames = (config.forbidden ?? []).map((rule) => rule.name);

/** One wrong import per rule: the planted file, the module it imports, the rule that must refuse it. */
const WRONG: { rule: string; from: string; to: string }[] = [
  { rule: 'schemas-wire-only', from: 'schemas/planted.ts', to: 'src/errors.ts' },
  { rule: 'connectors-portable', from: 'connectors/planted.ts', to: 'src/errors.ts' },
  { rule: 'foundation-at-the-bottom', from: 'src/paging/planted.ts', to: 'src/services/tenancy/tenants.ts' },
  { rule: 'store-below-crypto', from: 'src/store/planted.ts', to: 'src/crypto/jwe.ts' },
  { rule: 'crypto-primitives-only', from: 'src/crypto/planted.ts', to: 'src/services/identity/key-ring.ts' },
  { rule: 'trail-below-services', from: 'src/events/planted.ts', to: 'src/services/tenancy/tenants.ts' },
  { rule: 'audit-not-to-delivery', from: 'src/audit/planted.ts', to: 'src/notify/deliveries.ts' },
  { rule: 'services-below-operations', from: 'src/services/planted.ts', to: 'src/operations/define.ts' },
  { rule: 'operations-not-to-store', from: 'src/operations/planted.ts', to: 'src/store/db.ts' },
  { rule: 'operations-below-pipeline', from: 'src/operations/planted-step.ts', to: 'src/plugins/audit.ts' },
  { rule: 'listener-apps-on-top', from: 'src/plugins/planted.ts', to: 'src/app.ts' },
  { rule: 'process-on-top', from: 'src/notify/planted.ts', to: 'src/server.ts' },
  { rule: 'no-circular', from: 'src/views/planted-a.ts', to: 'src/views/planted-b.ts' },
];

/** Imports the rules allow (downwards, or within a layer): none of these may be reported. */
const ALLOWED: { from: string; to: string }[] = [
  { from: 'connectors/allowed.ts', to: 'schemas/common.ts' },
  { from: 'src/crypto/allowed.ts', to: 'src/store/db.ts' },
  { from: 'src/services/allowed.ts', to: 'src/audit/writer.ts' },
  { from: 'src/operations/allowed.ts', to: 'src/services/tenancy/tenants.ts' },
  { from: 'src/plugins/allowed.ts', to: 'src/operations/define.ts' },
  { from: 'src/management/app.ts', to: 'src/app.ts' },
  { from: 'src/cli/allowed.ts', to: 'src/management/app.ts' },
];

let dir = '';
let result: ICruiseResult;

function write(file: string, imports: string[] = []): void {
  const path = join(dir, file);
  mkdirSync(dirname(path), { recursive: true });
  const lines = imports.map((to, i) => `import { x as x${i} } from '${relativeSpecifier(file, to)}';`);
  writeFileSync(path, `${lines.join('\n')}\nexport const x = 1;\n`);
}

/** `src/a/b.ts` importing `src/c.ts` → `../c.js`, as the sources spell it. */
function relativeSpecifier(from: string, to: string): string {
  const up = from.split('/').length - 1;
  return `${up ? '../'.repeat(up) : './'}${to.replace(/\.ts$/, '.js')}`;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cardline-layers-'));
  const imports = new Map<string, string[]>();
  const add = (from: string, to: string) => imports.set(from, [...(imports.get(from) ?? []), to]);
  for (const { from, to } of [...WRONG, ...ALLOWED]) add(from, to);
  // The cycle's other half.
  add('src/views/planted-b.ts', 'src/views/planted-a.ts');
  const targets = [...WRONG, ...ALLOWED].map((c) => c.to).filter((to) => !imports.has(to));
  for (const file of new Set(targets)) write(file);
  for (const [from, tos] of imports) write(from, tos);
  const cruised = await cruise(['src', 'connectors', 'schemas'], {
    baseDir: dir,
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
    includeOnly: config.options?.includeOnly ?? '',
    tsPreCompilationDeps: true,
    outputType: 'json',
  });
  result = JSON.parse(cruised.output as string) as ICruiseResult;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const violationsFrom = (file: string) => result.summary.violations.filter((v) => v.from === file).map((v) => v.rule.name);

describe('the layer rules', () => {
  it('every rule has a planted wrong import below (a new rule gets one)', () => {
    expect([...new Set(WRONG.map((c) => c.rule))].sort()).toEqual([...ruleNames].sort());
  });

  for (const { rule, from, to } of WRONG) {
    it(`${rule}: refuses ${from} importing ${to}`, () => {
      expect(violationsFrom(from)).toContain(rule);
    });
  }

  it('allow the imports that point down or stay in their layer', () => {
    const reported = ALLOWED.flatMap(({ from }) => violationsFrom(from).map((rule) => `${from}: ${rule}`));
    expect(reported).toEqual([]);
  });

  it('are what `npm run lint` runs, over the four trees', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.lint).toContain('depcruise src connectors schemas scripts --config .dependency-cruiser.cjs');
  });
});

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  it.each(ruleNames)('names the rule %s', (name) => {
    expect(doc).toContain(`\`${name}\``);
  });
});
