// The documentation holds together: README.md stays under 300 lines, every relative link of README.md and
// docs/**/*.md names a file that exists and, with an anchor, a heading of that file (GitHub's slugs), and the
// decision index lists every record (decision 0140).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { marked, type Token } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What the checker may ask of the repository: a Markdown file's text, and whether a path exists. */
interface Repo {
  read(path: string): string;
  exists(path: string): boolean;
}

/** The text a heading renders to (GitHub slugs the rendered text, not the Markdown). */
const plain = (tokens: Token[]): string =>
  tokens.map((t) => ('tokens' in t && t.tokens ? plain(t.tokens) : 'text' in t ? String(t.text) : '')).join('');

/** The anchors of a Markdown file's headings, as GitHub makes them (duplicates get -1, -2…). */
function anchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  marked.walkTokens(marked.lexer(markdown), (t) => {
    if (t.type === 'heading') out.add(slugger.slug(plain(t.tokens ?? [])));
  });
  return out;
}

/** Every link and image target of a Markdown file, code spans and code blocks left out. */
function targets(markdown: string): string[] {
  const out: string[] = [];
  marked.walkTokens(marked.lexer(markdown), (t) => {
    if (t.type === 'link' || t.type === 'image') out.push(t.href);
  });
  return out;
}

/** The broken relative links of `files` (repository paths), each as "file: target (why)". */
function brokenLinks(files: string[], repo: Repo): string[] {
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  for (const file of files) {
    for (const target of targets(repo.read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:…: not checked offline
      const hash = target.indexOf('#');
      const pathPart = decodeURI(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const path = pathPart === '' ? file : posix.normalize(pathPart.startsWith('/') ? pathPart.slice(1) : posix.join(posix.dirname(file), pathPart));
      if (path.startsWith('..') || !repo.exists(path)) {
        broken.push(`${file}: ${target} (no file ${path})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!path.endsWith('.md')) {
        if (!/^L\d+(-L\d+)?$/.test(anchor)) broken.push(`${file}: ${target} (an anchor on a file that has no headings)`);
        continue;
      }
      if (!anchorsOf.has(path)) anchorsOf.set(path, anchors(repo.read(path)));
      if (!anchorsOf.get(path)!.has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${path})`);
    }
  }
  return broken;
}

const disk: Repo = {
  read: (path) => readFileSync(`${ROOT}/${path}`, 'utf8'),
  exists: (path) => existsSync(`${ROOT}/${path}`),
};

const markdownUnder = (dir: string): string[] =>
  readdirSync(`${ROOT}/${dir}`, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => posix.join(dir, f.split('\\').join('/')))
    .sort();

/** A repository held in memory, for the checker's own tests. */
const memory = (files: Record<string, string>, others: string[] = []): Repo => ({
  read: (path) => files[path] ?? '',
  exists: (path) => path in files || others.includes(path) || Object.keys(files).some((f) => f.startsWith(`${path}/`)),
});

describe('the link checker', () => {
  const docs = {
    'README.md': '# Cardline\n\n## How a request flows\n\nSee [ok](docs/api.md#idempotency-keys).\n',
    'docs/api.md': [
      '# The API',
      '## Idempotency keys',
      "## A bank's Admin, on the public API",
      '### `GET /v1/audit`',
      '## Gateway keys: rotation',
      '## Notes',
      '## Notes',
      '',
    ].join('\n\n'),
  };

  it('accepts links to files and to headings, slugged as GitHub does', () => {
    const links = [
      '[a](api.md#idempotency-keys)',
      "[b](api.md#a-banks-admin-on-the-public-api)",
      '[c](api.md#get-v1audit)',
      '[d](api.md#gateway-keys-rotation)',
      '[e](api.md#notes-1)',
      '[same page](#guide)',
      '[f](../README.md#how-a-request-flows)',
      '[g](../src/app.ts)',
      '[h](../src/app.ts#L10-L20)',
      '[i](https://example.com/nowhere#x)',
      '`[j](missing.md)`',
      '```\n[k](missing.md)\n```',
    ];
    const repo = memory({ ...docs, 'docs/guide.md': `# Guide\n\n${links.join('\n\n')}\n` }, ['src/app.ts']);
    expect(brokenLinks(['README.md', 'docs/api.md', 'docs/guide.md'], repo)).toEqual([]);
  });

  it('names a link to a missing file, a missing heading, or an anchor on a file without headings', () => {
    const links = ['[a](api.md#idempotency)', '[b](operating.md)', '[c](#nowhere)', '[d](../src/app.ts#main)', '[e](../../outside.md)'];
    const repo = memory({ ...docs, 'docs/guide.md': `# Guide\n\n${links.join('\n\n')}\n` }, ['src/app.ts']);
    expect(brokenLinks(['docs/guide.md'], repo)).toEqual([
      'docs/guide.md: api.md#idempotency (no heading #idempotency in docs/api.md)',
      'docs/guide.md: operating.md (no file docs/operating.md)',
      'docs/guide.md: #nowhere (no heading #nowhere in docs/guide.md)',
      'docs/guide.md: ../src/app.ts#main (an anchor on a file that has no headings)',
      'docs/guide.md: ../../outside.md (no file ../outside.md)',
    ]);
  });
});

describe('the documentation', () => {
  it('README.md is under 300 lines', () => {
    const lines = disk.read('README.md').split('\n').length - 1;
    expect(lines).toBeLessThan(300);
  });

  it('every relative link of README.md and docs/**/*.md resolves to a file and, with an anchor, to one of its headings', () => {
    const files = ['README.md', ...markdownUnder('docs')];
    expect(files).toEqual(expect.arrayContaining(['docs/api.md', 'docs/connectors.md', 'docs/operating.md', 'docs/sdk.md', 'docs/security.md', 'docs/decisions/README.md']));
    expect(brokenLinks(files, disk)).toEqual([]);
  });

  it('the decision index lists every decision record', () => {
    const listed = new Set(targets(disk.read('docs/decisions/README.md')));
    const records = readdirSync(`${ROOT}/docs/decisions`).filter((f) => /^\d{4}-.*\.md$/.test(f));
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((f) => !listed.has(f))).toEqual([]);
  });
});
