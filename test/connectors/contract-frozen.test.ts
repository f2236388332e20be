// Freezes the public contract: the core operations as the contract table declares them (group, kind, input
// and result schemas), the other interfaces of connectors/contract.ts, and the JSON of every export of schemas/. A deliberate change regenerates the snapshot in the same commit:
//   UPDATE_CONTRACT=1 npx vitest run test/connectors/contract-frozen.test.ts
// A breaking change to a connector's behaviour gets a new versioned connector id instead.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const SNAPSHOT = join(ROOT, 'test/connectors/__snapshots__/contract.json');

interface Contract {
  /** Each core operation of the table (connectors/contract.ts CONTRACT): group, kind, input and result as JSON Schema. */
  connector: Record<string, unknown>;
  /** Every other exported interface of contract.ts: member → type. */
  types: Record<string, Record<string, string>>;
  /** schemas/<file> → export → its JSON (TypeBox schemas and constant tables). */
  schemas: Record<string, Record<string, unknown>>;
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

function readInterfaces(file: string): Record<string, Record<string, string>> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: Record<string, Record<string, string>> = {};
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node) || !node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return;
    const members: Record<string, string> = {};
    for (const m of node.members) {
      const name = `${m.name?.getText(source) ?? '(index)'}${m.questionToken ? '?' : ''}`;
      if (ts.isMethodSignature(m)) {
        const params = m.parameters.map((p) => squash(p.getText(source))).join(', ');
        members[name] = `(${params}) => ${squash(m.type?.getText(source) ?? 'void')}`;
      } else if (ts.isPropertySignature(m)) {
        members[name] = squash(m.type?.getText(source) ?? 'unknown');
      }
    }
    out[node.name.text] = members;
  });
  return out;
}

async function currentContract(): Promise<Contract> {
  const types = readInterfaces(join(ROOT, 'connectors/contract.ts'));
  const { CONTRACT } = (await import(pathToFileURL(join(ROOT, 'connectors/contract.ts')).href)) as { CONTRACT: Record<string, unknown> };
  const schemas: Contract['schemas'] = {};
  for (const file of readdirSync(join(ROOT, 'schemas')).filter((f) => f.endsWith('.ts')).sort()) {
    const mod = (await import(pathToFileURL(join(ROOT, 'schemas', file)).href)) as Record<string, unknown>;
    const exported: Record<string, unknown> = {};
    for (const name of Object.keys(mod).sort()) {
      if (typeof mod[name] === 'function') continue;
      // TypeBox's symbols (Kind, Optional) drop out; optionality remains in each object's `required`.
      exported[name] = JSON.parse(JSON.stringify(mod[name]));
    }
    schemas[file] = exported;
  }
  return { connector: JSON.parse(JSON.stringify(CONTRACT)) as Record<string, unknown>, types, schemas };
}

const HOW = 'If the change is deliberate, regenerate in the same commit: UPDATE_CONTRACT=1 npx vitest run test/connectors/contract-frozen.test.ts';

describe('frozen public contract', async () => {
  const current = await currentContract();
  if (process.env.UPDATE_CONTRACT === '1') writeFileSync(SNAPSHOT, `${JSON.stringify(current, null, 2)}\n`);
  const frozen: Contract | null = existsSync(SNAPSHOT) ? (JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Contract) : null;

  it('has a committed snapshot', () => {
    expect(frozen, `no snapshot at ${SNAPSHOT}. ${HOW}`).not.toBeNull();
  });

  it('the contract table has the frozen operations, kinds, inputs and results', () => {
    expect(Object.keys(current.connector)).toContain('upgradeLimit');
    expect(current.connector, HOW).toEqual(frozen?.connector);
  });

  it("the contract's other interfaces (context, inputs, results, definition) are unchanged", () => {
    expect(current.types, HOW).toEqual(frozen?.types);
  });

  for (const file of Object.keys(current.schemas)) {
    it(`schemas/${file} serializes to the frozen JSON`, () => {
      expect(current.schemas[file], HOW).toEqual(frozen?.schemas[file]);
    });
  }

  it('no schema file was removed', () => {
    expect(Object.keys(current.schemas), HOW).toEqual(Object.keys(frozen?.schemas ?? {}));
  });
});
