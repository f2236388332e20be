// What the docs' walk-through tests share: the shell block between a doc's markers, its ports swapped for the
// test's own, an `npx cardline` that is this checkout's bin/cardline.js, and mock core servers started and
// waited for (GET /health).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.js';

/** The ```sh block between `<!-- marker -->` and `<!-- /marker -->` in a file of docs/. */
export function docBlock(doc: string, marker: string): string {
  const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
  const match = new RegExp(`<!-- ${marker} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /${marker} -->`).exec(text);
  if (!match) throw new Error(`docs/${doc} has no ${marker} block`);
  return match[1]!;
}

/** The block with each documented address replaced by the test's own (documented → actual). */
export const withAddresses = (script: string, addresses: Record<string, string>): string =>
  Object.entries(addresses).reduce((s, [documented, actual]) => s.replaceAll(documented, actual), script);

/** A shell function that runs `npx cardline …` as npx resolves it in the project: its bin/cardline.js. */
export const NPX_CARDLINE = `npx() { if [ "$1" = cardline ]; then shift; node ${JSON.stringify(join(ROOT, 'bin', 'cardline.js'))} "$@"; else command npx "$@"; fi; }`;

/** The compiled mock core (`npm run mock-core` runs its source through tsx); the test file calls ensureBuilt first. */
export const MOCK_CORE_MAIN = join(ROOT, 'dist', 'src', 'mock-core', 'main.js');

/** `npm run mock-core` on a port and a data directory of its own; resolves once it answers GET /health. */
export async function startMockCore(port: number, dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MOCK_CORE_MAIN, '--port', String(port), '--data-dir', dataDir, '--log-level', 'warn'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  // A guard that only ends a broken run (a loaded machine may take a minute to start it): no duration asserted.
  for (let i = 0; i < 2400 && child.exitCode === null; i++) {
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGTERM');
  throw new Error(`the mock core on port ${port} did not answer GET /health`);
}

/**
 * What the documents-in-order test does with a runnable block (```sh, ```bash, ```ts, ```js), said by an
 * `<!-- in-order: … -->` comment on a line just above it: run it (no comment), `skip: <reason>`,
 * `background, ready at <url>` (a server in a terminal of its own, waited for), or `demo stopped` (run with
 * the demo stopped, as Ctrl-C stops it, and the demo started again afterwards by the README's command).
 */
export type InOrder = { kind: 'run' } | { kind: 'skip'; reason: string } | { kind: 'background'; readyAt: string } | { kind: 'demo-stopped' };

export interface DocBlock {
  /** The file, from the project directory, and the line of its opening fence. */
  where: string;
  lang: string;
  code: string;
  inOrder: InOrder;
}

export const RUNNABLE = new Set(['sh', 'bash', 'ts', 'js']);

function directive(comment: string, where: string): InOrder {
  const text = comment.trim();
  if (text === 'demo stopped') return { kind: 'demo-stopped' };
  const skip = /^skip: (\S.*)$/.exec(text);
  if (skip) return { kind: 'skip', reason: skip[1]! };
  const background = /^background, ready at (http:\/\/\S+)$/.exec(text);
  if (background) return { kind: 'background', readyAt: background[1]! };
  throw new Error(`${where}: an in-order comment says neither "skip: <reason>", "background, ready at <url>" nor "demo stopped": ${text}`);
}

/** Every fenced block of a file (indented ones dedented), with the in-order comment above it, if any. */
export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    const where = `${file}:${i + 1}`;
    let inOrder: InOrder = { kind: 'run' };
    for (let j = i - 1; j >= 0 && /^\s*<!--.*-->$/.test(lines[j]!); j--) {
      const comment = /^\s*<!-- in-order: (.*) -->$/.exec(lines[j]!);
      if (comment) inOrder = directive(comment[1]!, where);
    }
    blocks.push({ where, lang: open[2]!, code: lines.slice(i + 1, end).map((l) => l.slice(indent)).join('\n'), inOrder });
    i = end;
  }
  return blocks;
}

/** One `# →` group of a shell block (or all `// →` lines of a script): what the lines before it print. */
export interface Expectation {
  where: string;
  /** The block's line after which the output is complete. */
  afterLine: number;
  text: string;
}

// An arrow line's own remark, after three spaces: `# → [] (no failed login so far)`.
const REMARK = /\s{3,}\([^()]*\)$/;

/**
 * The `# →` groups of a shell block: an arrow line and the lines continuing it (`#` and at least two
 * spaces), and further arrow lines directly after. For a script (`//`), every arrow of the block, in order,
 * as one expectation of all it prints.
 */
export function expectations(block: DocBlock): Expectation[] {
  const script = block.lang === 'ts' || block.lang === 'js';
  const arrow = script ? /(?:^|\s)\/\/ → (.*)$/ : /^\s*# → (.*)$/;
  const continued = script ? /^\s*\/\/\s{2,}(\S.*)$/ : /^\s*#\s{2,}(\S.*)$/;
  const lines = block.code.split('\n');
  const found: Expectation[] = [];
  const at = Number(block.where.split(':').pop());
  for (let i = 0; i < lines.length; i++) {
    let m = arrow.exec(lines[i]!);
    if (!m) continue;
    const text: string[] = [];
    const start = i;
    for (; i < lines.length; i++) {
      if ((m = arrow.exec(lines[i]!))) text.push(m[1]!.replace(REMARK, ''));
      else if (i > start && (m = continued.exec(lines[i]!))) text[text.length - 1] += `\n${m[1]!.replace(REMARK, '')}`;
      else break;
    }
    i--;
    found.push({ where: `${block.where.replace(/:\d+$/, '')}:${at + start + 1}`, afterLine: i, text: text.join('\n') });
  }
  if (script && found.length > 1) return [{ ...found[0]!, afterLine: lines.length - 1, text: found.map((e) => e.text).join('\n') }];
  return found;
}

/** The statuses the in-order shell's curl reports on the terminal, one a call: `@@http 409@@`. */
export const STATUS = /@@http (\d{3})@@/g;

/**
 * Whether a step printed what its arrows say. Whitespace does not count (the documents wrap long answers);
 * `…` stands for anything; an arrow starting with a status (`# → 409 {…}`) needs a call that answered it, and
 * a call answering 4xx or 5xx needs an arrow naming its status.
 */
export function outputMatches(expected: string, printed: string): string | undefined {
  const statuses = [...printed.matchAll(STATUS)].map((m) => m[1]!);
  const announced: string[] = [];
  const body = expected
    .split('\n')
    .map((line) => line.replace(/^(\d{3}) (?=[{[]|$)/, (_, s: string) => (announced.push(s), '')))
    .join('\n');
  const squash = (s: string) => s.replace(STATUS, '').replace(/\s+/g, '');
  const pattern = squash(body)
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  if (!new RegExp(`^${pattern}$`).test(squash(printed))) return 'the output differs';
  for (const s of announced) if (!statuses.includes(s)) return `no call answered ${s} (answered: ${statuses.join(', ') || 'none'})`;
  for (const s of statuses) if (Number(s) >= 400 && !announced.includes(s)) return `a call answered ${s}, which no arrow says`;
  return undefined;
}
