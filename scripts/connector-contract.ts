// What connector authors build against, as JSON: the frozen connector contract that `npm run generate` writes
// to test/connectors/__snapshots__/contract.json (decision 0260). It holds the operations of
// connectors/contract.ts (name, group, kind, input and result as JSON Schema, shared wire schemas inlined),
// that module's exported names, interfaces and type aliases as written, and the business codes a `rejected`
// result may carry. The gateway's own API is frozen by its committed OpenAPI documents instead.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const CONTRACT_SOURCE = 'connectors/contract.ts';
export const CONTRACT_SNAPSHOT = 'test/connectors/__snapshots__/contract.json';

export interface ConnectorContract {
  /** Each core operation of CONTRACT: group, kind, summary, input and result as JSON Schema. */
  operations: Record<string, unknown>;
  /** The names contract.ts exports at run time (helpers, error classes, the table). */
  exports: string[];
  /** Each exported interface (member → type) and type alias (its text) of contract.ts. */
  types: Record<string, Record<string, string> | string>;
  /** The business codes of schemas/business-codes.ts, the `code` of a `rejected` result. */
  businessCodes: string[];
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
const exported = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The exported interfaces and type aliases of a TypeScript file, as written (whitespace squashed, comments dropped). */
function declaredTypes(file: string): ConnectorContract['types'] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: ConnectorContract['types'] = {};
  source.forEachChild((node) => {
    if (!exported(node) || !(ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node))) return;
    const params = node.typeParameters?.length ? `<${node.typeParameters.map((p) => squash(p.getText(source))).join(', ')}>` : '';
    if (ts.isInterfaceDeclaration(node)) {
      const members: Record<string, string> = {};
      for (const m of node.members) {
        const name = `${m.name?.getText(source) ?? '(index)'}${m.questionToken ? '?' : ''}`;
        if (ts.isMethodSignature(m)) members[name] = `(${m.parameters.map((p) => squash(p.getText(source))).join(', ')}) => ${squash(m.type?.getText(source) ?? 'void')}`;
        else if (ts.isPropertySignature(m)) members[name] = squash(m.type?.getText(source) ?? 'unknown');
      }
      out[`${node.name.text}${params}`] = members;
    } else if (ts.isTypeAliasDeclaration(node)) {
      const text = squash(printed(node.type, source));
      // `type X = Static<typeof X>` restates the schema X, frozen with the operation that uses it.
      if (text !== `Static<typeof ${node.name.text}>`) out[`${node.name.text}${params}`] = text;
    }
  });
  return out;
}

/** A type's text without its comments. */
function printed(type: ts.TypeNode, source: ts.SourceFile): string {
  return ts.createPrinter({ removeComments: true }).printNode(ts.EmitHint.Unspecified, type, source);
}

/** The connector contract as it is now (TypeBox's symbols drop out; optionality remains in each `required`). */
export async function connectorContract(): Promise<ConnectorContract> {
  const contract = (await import(pathToFileURL(join(ROOT, CONTRACT_SOURCE)).href)) as Record<string, unknown> & { CONTRACT: Record<string, unknown> };
  const { BUSINESS_CODES } = await import('../schemas/business-codes.js');
  return {
    operations: JSON.parse(JSON.stringify(contract.CONTRACT)) as Record<string, unknown>,
    exports: Object.keys(contract).sort(),
    types: declaredTypes(join(ROOT, CONTRACT_SOURCE)),
    businessCodes: Object.keys(BUSINESS_CODES),
  };
}

/** The snapshot file's exact text. */
export const connectorContractText = async (): Promise<string> => `${JSON.stringify(await connectorContract(), null, 2)}\n`;
