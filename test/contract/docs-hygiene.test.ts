// What the documents ask a reader to do leaves the checkout and the machine as they were: every file the README
// or docs/ tell a reader to create in the checkout is ignored by git, and every server a code block starts
// listens on loopback only. The Docker image routes every CLI command to the CLI, and the compose demo takes an
// operator key.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { COMMANDS } from '../../src/cli/program.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCS = ['README.md', ...readdirSync(`${ROOT}docs`).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

/** The fenced code blocks of a Markdown file, with their language. */
const blocks = (text: string) => [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));

/** Files a document tells its reader to create where they stand: "save this as `x`", and `> x` in a shell block. */
function filesCreated(text: string): string[] {
  const saved = [...text.matchAll(/save (?:this|it) as `([^`/\s]+)`/g)].map((m) => m[1]!);
  const redirected = blocks(text)
    .filter((b) => b.lang === 'sh' || b.lang === 'bash')
    .flatMap((b) => [...b.code.matchAll(/(?<![0-9&])>\s*([\w.-]+\.(?:json|ts|js|pem|txt|csv))\b/g)].map((m) => m[1]!));
  return [...saved, ...redirected];
}

describe('the documents', () => {
  it('have every file they tell a reader to create in the checkout ignored by git', () => {
    const files = [...new Set(DOCS.flatMap((doc) => filesCreated(read(doc))))];
    expect(files).toEqual(expect.arrayContaining(['quickstart.ts', 'checkpoint.json']));
    const tracked = files.filter((file) => {
      try {
        execFileSync('git', ['check-ignore', '-q', file], { cwd: ROOT });
        return false;
      } catch {
        return true;
      }
    });
    expect(tracked, 'add them to .gitignore').toEqual([]);
  });

  it('start servers on loopback only', () => {
    const listens = DOCS.flatMap((doc) =>
      blocks(read(doc))
        .filter((b) => /^(js|ts|javascript|typescript)$/.test(b.lang))
        .flatMap((b) => [...b.code.matchAll(/\.listen\(([^)]*)\)/g)].map((m) => ({ doc, args: m[1]! }))),
    );
    expect(listens.length).toBeGreaterThan(0);
    for (const { doc, args } of listens) expect(args, doc).toMatch(/'127\.0\.0\.1'|'localhost'|"127\.0\.0\.1"/);
  });
});

describe('the Docker image and compose demo', () => {
  it('route every command of the CLI to the CLI (docker run … cardline-image login)', () => {
    const line = read('bin/docker-entrypoint.sh')
      .split('\n')
      .find((l) => l.includes('exec node /app/bin/cardline.js') && !l.trim().startsWith('cardline)'))!;
    const routed = line.trim().split(')')[0]!.split('|');
    for (const name of [...COMMANDS.map((c) => c.name), 'master-key']) expect(routed, name).toContain(name);
  });

  it("run `--demo` with the memory settings of `npm run demo` (decision 0389)", () => {
    const script = (JSON.parse(read('package.json')) as { scripts: { demo: string } }).scripts.demo;
    const line = read('bin/docker-entrypoint.sh')
      .split('\n')
      .find((l) => l.trim().startsWith('--demo)'))!;
    const settings = script.replace(' bin/gateway.js --demo', '');
    expect(settings).toBe('MALLOC_MMAP_THRESHOLD_=131072 node --v8-pool-size=1 --max-semi-space-size=2 --max-old-space-size=128');
    expect(line.trim()).toBe(`--demo) ${settings.replace(' node ', ' exec node ')} /app/dist/src/server.js "$@" ;;`);
  });

  it("pass the demo's operator key to the gateway", () => {
    const compose = parse(read('compose.yaml')) as { services: { gateway: { environment: Record<string, string> } } };
    expect(compose.services.gateway.environment.CARDLINE_DEMO_OPERATOR_KEY).toBe('${CARDLINE_DEMO_OPERATOR_KEY:-}');
  });
});
