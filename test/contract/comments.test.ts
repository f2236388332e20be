// The source's comments say why the code is as it is (STYLE §11): the story of a fixed defect and the issue
// that reported it belong to the commit and its test, so no comment in shipped code cites an issue, and the
// share of comment lines stays within the style guide's range.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCES = ['src', 'connectors', 'schemas', 'sdk/src', 'console/src', 'bin', 'scripts'];
/** The connector contract's doc comments are the authoring guide for connector writers (STYLE §11). */
const EXEMPT = new Set(['connectors/contract.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'generated' || e.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|js|mjs|cjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each comment line of a file: `//` lines and the lines of `/* … *\/` blocks that open a line. */
function commentLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    const t = raw.trim();
    if (inBlock || t.startsWith('//') || t.startsWith('/*')) {
      out.push({ line: i + 1, text: t });
      inBlock = inBlock ? !t.includes('*/') : t.startsWith('/*') && !t.includes('*/');
    }
  });
  return out;
}

const files = SOURCES.flatMap(sourceFiles).filter((f) => !EXEMPT.has(f));
const texts = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));

describe('source comments', () => {
  it('cite no issue number', () => {
    const citing = files.flatMap((f) =>
      commentLines(texts.get(f)!).filter((c) => /\bissues?\s*#?\d+/i.test(c.text)).map((c) => `${f}:${c.line}: ${c.text}`),
    );
    expect(citing).toEqual([]);
  });

  it('are at most a tenth of the lines', () => {
    let comments = 0;
    let lines = 0;
    for (const text of texts.values()) {
      comments += commentLines(text).length;
      lines += text.split('\n').length;
    }
    expect(files.length).toBeGreaterThan(100);
    expect(comments / lines).toBeLessThanOrEqual(0.1);
  });
});
