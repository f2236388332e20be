// The documents as a newcomer reads them: the README, docs/api.md, docs/sdk.md and docs/operating.md, every
// runnable block in reading order in one terminal (bash, npx cardline, curl, `npx tsx` for the scripts)
// against ONE demo started by the README's own command, and every `# →` (or `// →`) line compared with what
// the steps before it printed. A block the test cannot run says why, above it (`<!-- in-order: skip: … -->`).
// Only the ports change (the test's own free ones for 8080, 8081, 9090 and 9091), and the project directory
// is a copy of links to this checkout's files, so that what the documents write (./data, client keys,
// checkpoint.json, quickstart.ts) lands in a directory of the test's own. No duration is asserted.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, freePort } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';
import { MOCK_CORE_MAIN, NPX_CARDLINE, RUNNABLE, docBlocks, expectations, outputMatches, withAddresses, type DocBlock, type Expectation } from '../helpers/walkthrough.js';

const DOCS = ['README.md', 'docs/api.md', 'docs/sdk.md', 'docs/operating.md'];

/** package.json's `demo` script (its heap and malloc settings too), the gateway named by its absolute path. */
function demoScript(): string {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { demo: string } }).scripts.demo;
  expect(script).toContain('bin/gateway.js --demo');
  return script.replace('bin/gateway.js', JSON.stringify(join(ROOT, 'bin', 'gateway.js')));
}

/** The shell the blocks run in: the project's `npx cardline` and `npx tsx`, `npm run demo|mock-core` on the test's ports, curl saying each status. */
function prelude(dir: string, ports: Record<string, number>): string {
  return `exec 2>&1 </dev/null
PIDS=${JSON.stringify(join(dir, 'pids'))}; LOGS=${JSON.stringify(join(dir, 'logs'))}
${NPX_CARDLINE.replace('else command npx', `elif [ "$1" = tsx ]; then shift; node --import tsx "$@"; else command npx`)}
npm() {
  case "$1 $2" in
    "run demo") shift 2; PORT=${ports.gw} CARDLINE_ADMIN_PORT=${ports.admin} ${demoScript()} "$@" ;;
    "run mock-core") shift 2; [ "$1" = -- ] && shift; MOCK_CORE_PORT=${ports.cards} node ${JSON.stringify(MOCK_CORE_MAIN)} "$@" ;;
    *) command npm "$@" ;;
  esac
}
export -f npm npx
curl() { command curl -N -w '%{stderr}\\n@@http %{http_code}@@\\n' "$@"; }
mark() { printf '\\n@@step %s@@\\n' "$1"; }
# serve <log> <ready url> <code>: a server as in a terminal of its own (not a job of this shell, whose \`wait\`
# would wait for it; a session of its own), waited for until it answers: a guard against a broken start, not
# a bound asserted. Its pid in SERVED.
serve() {
  local started=$SECONDS
  ( setsid bash -c "$3" >> "$1" 2>&1 </dev/null & echo $! >> "$PIDS"; echo $! > "$LOGS/served" )
  SERVED=$(cat "$LOGS/served")
  until command curl -fsS -o /dev/null "$2" 2>/dev/null; do
    if ! kill -0 "$SERVED" 2>/dev/null || [ $((SECONDS - started)) -gt 600 ]; then echo "the server of $2 did not start:"; cat "$1"; return 1; fi
    sleep 0.05
  done
}
`;
}

/** A server block: started in the background with its own log, and waited for. */
function background(block: DocBlock, addresses: Record<string, string>, index: number): string {
  if (block.inOrder.kind !== 'background') throw new Error('not a background block');
  const code = withAddresses(block.code, addresses);
  return `serve "$LOGS/${index}.log" ${withAddresses(block.inOrder.readyAt, addresses)} ${shellQuote(code)}\n`;
}

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

describe.runIf(!process.env.DATABASE_URL)('the documents, run in reading order against one demo', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let dir: string;
  let project: string;
  const ports = { gw: 0, admin: 0, cards: 0, banking: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cardline-docs-in-order-'));
    project = join(dir, 'project');
    mkdirSync(project);
    mkdirSync(join(dir, 'logs'));
    for (const entry of readdirSync(ROOT)) if (!['data', '.git'].includes(entry)) symlinkSync(join(ROOT, entry), join(project, entry));
    [ports.gw, ports.admin, ports.cards, ports.banking] = [await freePort(), await freePort(), await freePort(), await freePort()];
  });
  afterAll(() => {
    // Whatever the run left: every server's process group.
    const pids = (() => {
      try {
        return readFileSync(join(dir, 'pids'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    })();
    for (const pid of pids) {
      try {
        process.kill(-Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs every block of the four documents in order, and each prints what its arrows say', async () => {
    const addresses = {
      'http://localhost:8080': `http://127.0.0.1:${ports.gw}`,
      'http://127.0.0.1:8081': `http://127.0.0.1:${ports.admin}`,
      '127.0.0.1:9090': `127.0.0.1:${ports.cards}`,
      '127.0.0.1:9091': `127.0.0.1:${ports.banking}`,
      '--port 9091': `--port ${ports.banking}`,
    };
    const blocks = DOCS.flatMap(docBlocks).filter((b) => RUNNABLE.has(b.lang));
    const demo = blocks.find((b) => b.inOrder.kind === 'background' && /npm run demo/.test(b.code));
    expect(demo?.where, 'the README starts the demo in a block marked background').toMatch(/^README\.md:/);
    let script = prelude(dir, ports);
    // The public API answers ready a moment before the management listener listens (a block right after a
    // restart reads its /metrics): both are waited for.
    const managementUp = `until command curl -fsS -o /dev/null http://127.0.0.1:${ports.admin}/health/live 2>/dev/null; do kill -0 "$DEMO" 2>/dev/null || { echo "the demo exited:"; cat "$LOGS/0.log"; return 1; }; sleep 0.05; done`;
    script += `demo_start() {\n${background(demo!, addresses, 0)}DEMO=$SERVED\n${managementUp}\n}\n`;
    // Ctrl-C in the demo's terminal: SIGINT to its process group; the demo is gone once its process is.
    script += `demo_stop() { kill -INT -- -"$DEMO"; while kill -0 "$DEMO" 2>/dev/null; do sleep 0.05; done; }\n`;
    const steps: Expectation[] = [];
    blocks.forEach((block, index) => {
      if (block.inOrder.kind === 'skip') return;
      const code = withAddresses(block.code, addresses);
      script += `mark ${JSON.stringify(`begin ${block.where}`)}\n`;
      if (block === demo) script += 'demo_start\n';
      else if (block.inOrder.kind === 'background') script += background(block, addresses, index + 1);
      else if (block.lang === 'ts' || block.lang === 'js') {
        const file = `in-order-${index}.${block.lang === 'ts' ? 'ts' : 'mjs'}`;
        writeFileSync(join(project, file), code);
        script += `npx tsx ${file}\n`;
        for (const e of expectations(block)) script += `mark ${steps.push(e) - 1}\n`;
      } else {
        const lines = code.split('\n');
        for (const e of expectations(block).reverse()) lines.splice(e.afterLine + 1, 0, `mark ${steps.push(e) - 1}`);
        if (block.inOrder.kind === 'demo-stopped') script += `demo_stop\n${lines.join('\n')}\ndemo_start\n`;
        else script += `${lines.join('\n')}\n`;
      }
    });
    script += `mark end\nwhile read -r p; do kill -TERM -- -"$p" 2>/dev/null || true; done < "$PIDS"\n`;

    const env = baseEnv({ TMPDIR: dir });
    delete env.CARDLINE_ADMIN_PORT;
    const r = await runProcess('bash', ['-e', '-c', script], { cwd: project, env });
    const printed = new Map<string, string>();
    let last = '';
    for (const part of r.stdout.split(/\n?@@step (.+?)@@\n/).entries()) {
      if (part[0] % 2 === 0) last = part[1];
      else printed.set(part[1], last);
    }
    const mismatches = steps.flatMap((step, i) => {
      const out = printed.get(String(i));
      if (out === undefined) return [];
      const why = outputMatches(step.text, out);
      return why ? [`${step.where}: ${why}\n  expected: ${step.text}\n  printed:  ${out.trim()}`] : [];
    });
    const reached = [...printed.keys()].filter((k) => k.startsWith('begin ')).pop();
    expect(r.code, `${mismatches.join('\n\n')}\n\nthe run stopped after ${reached}:\n${last}\n--- demo ---\n${logTail(dir)}`).toBe(0);
    expect(steps.filter((_, i) => !printed.has(String(i))).map((s) => s.where)).toEqual([]);
    expect(mismatches.join('\n\n')).toBe('');
  }, 900_000);
});

function logTail(dir: string): string {
  try {
    return readFileSync(join(dir, 'logs', '0.log'), 'utf8').slice(-3000);
  } catch {
    return '(no log)';
  }
}
