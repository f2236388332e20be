// The crash test: a child process writes through the file connector and is SIGKILLed at random moments;
// every write it acknowledged must be there after re-open, and every file must still parse.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { FileCore, importFixtures } from '../../connectors/file/index.js';
import { LOCK_FILE, OWNER_FILE, pidAlive } from '../../connectors/file/lock.js';
import { isAtomicTemp } from '../../connectors/shared/durable-write.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, decodeLine } from '../../connectors/file/store.js';
import { demoFixtures, toSnapshot, withLuhnDigit } from '../../connectors/mock/fixtures.js';
import { FILE_TEST_SECRETS } from './fixtures/file-secrets.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WRITER = fileURLToPath(new URL('./fixtures/file-writer.ts', import.meta.url));
const ITERATIONS = 5;
const PHYSICAL_COUNT = 2_000;
const SEED = 0x5eed_c0de;

const xid = (n: number): string => String(n).padStart(5, '0');

/** mulberry32: a small seeded PRNG, so that a failing run can be repeated exactly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Demo fixtures plus one entity per physical-upgrade stream item, each with a virtual card and a free kit. */
function crashFixtures() {
  const state = demoFixtures();
  for (let n = 0; n < PHYSICAL_COUNT; n++) {
    const id = xid(n);
    state.entities.set(`ENT-X${id}`, {
      entityId: `ENT-X${id}`,
      name: `Crash ${id}`,
      type: 'BUSINESS',
      contact: { email: `crash-${id}@example.invalid`, mobile: '+10000000000' },
      creditLimitMinor: 100_000n,
      outstandingMinor: 0n,
      primaryAddress: { address1: `${n} Crash Road`, city: 'Lisbon', state: 'Demo', country: 'PT', pin: '1000-001' },
    });
    state.cards.set(`CARD-X${id}`, {
      cardId: `CARD-X${id}`,
      entityId: `ENT-X${id}`,
      form: 'VIRTUAL',
      state: 'ACTIVE',
      pan: withLuhnDigit(`4000009${id}000`),
      expiry: '12/29',
      cvv: '123',
      pinSet: false,
      balanceMinor: 0n,
    });
    state.kits.set(`KIT-X${id}`, { kitNo: `KIT-X${id}` });
  }
  return toSnapshot(state);
}

interface Run {
  pid: number;
  limits: number[];
  physicals: number[];
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Runs the writer from the given stream positions and SIGKILLs it `killAfterMs` after its first acknowledged write. */
function runWriter(dir: string, limitFrom: number, physicalFrom: number, killAfterMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, String(limitFrom), String(physicalFrom), String(PHYSICAL_COUNT)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run: Run = { pid: child.pid!, limits: [], physicals: [], stderr: '', code: null, signal: null };
    let buffered = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [kind, n] = line.split(' ');
        if (kind === 'L') run.limits.push(Number(n));
        else if (kind === 'P') run.physicals.push(Number(n));
        if ((kind === 'L' || kind === 'P') && !timer) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    // A writer that never acknowledges anything is a failure, not a hang; the bound is far beyond a loaded
    // machine's start of tsx and the store (15 s was not, at load 30).
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    // 'close' comes after the exit was reaped and stdout drained: the pid is gone and every line is read.
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      clearTimeout(timer);
      run.code = code;
      run.signal = signal;
      resolve(run);
    });
  });
}

/** Every file the killed writer left must parse; only a journal's tail may be torn. */
async function checkFiles(dir: string): Promise<{ journalLines: number; tornTail: boolean; temps: number }> {
  const snapshot = JSON.parse(await readFile(join(dir, SNAPSHOT_FILE), 'utf8'));
  expect(snapshot).toMatchObject({ format: 'cardline-file-core', version: 2 });
  const lines = (await readFile(join(dir, JOURNAL_FILE), 'utf8')).split('\n');
  const tail = lines.pop()!;
  const decoded = lines.map((l) => decodeLine(l));
  const firstBad = decoded.findIndex((e) => e === null);
  // Damage is allowed only as a tail: nothing intact after it.
  if (firstBad >= 0) expect(decoded.slice(firstBad).every((e) => e === null)).toBe(true);
  for (const e of decoded) if (e) expect(typeof JSON.parse(JSON.stringify(e)).seq).toBe('number');
  let temps = 0;
  for (const name of await readdir(dir)) {
    if (isAtomicTemp(name, SNAPSHOT_FILE) || isAtomicTemp(name, OWNER_FILE)) temps++;
    else expect([SNAPSHOT_FILE, JOURNAL_FILE, LOCK_FILE, OWNER_FILE]).toContain(name);
  }
  return { journalLines: decoded.filter(Boolean).length, tornTail: tail !== '' || firstBad >= 0, temps };
}

let dir: string;
afterAll(() => rm(dir, { recursive: true, force: true }));

it('keeps every acknowledged write through SIGKILLs at random moments', async () => {
  dir = await mkdtemp(join(tmpdir(), 'cardline-file-crash-'));
  await importFixtures(dir, crashFixtures(), FILE_TEST_SECRETS);
  const random = prng(SEED);
  let lastLimit = 0; // stream items 1.. set the limit to 50000 + n
  let lastPhysical = -1;
  const figures = { acknowledged: 0, inFlightApplied: 0, tornTails: 0, tempFilesLeft: 0, journalLines: 0 };

  for (let i = 0; i < ITERATIONS; i++) {
    const killAfterMs = 50 + Math.floor(random() * 350);
    const run = await runWriter(dir, lastLimit + 1, lastPhysical + 1, killAfterMs);
    expect(run.signal, `writer ended on its own: code ${run.code} ${run.stderr}`).toBe('SIGKILL');
    expect(run.limits.length + run.physicals.length).toBeGreaterThan(0);
    // Each stream acknowledges in order, continuing where the last run's acknowledgements stopped.
    expect(run.limits).toEqual(run.limits.map((_, k) => lastLimit + 1 + k));
    expect(run.physicals).toEqual(run.physicals.map((_, k) => lastPhysical + 1 + k));
    lastLimit = run.limits.at(-1) ?? lastLimit;
    lastPhysical = run.physicals.at(-1) ?? lastPhysical;
    figures.acknowledged += run.limits.length + run.physicals.length;

    // The killed writer's lock is still on disk, and it does not block the re-open.
    expect((await stat(join(dir, LOCK_FILE))).isDirectory()).toBe(true);
    const lock = JSON.parse(await readFile(join(dir, OWNER_FILE), 'utf8'));
    expect(lock.pid).toBe(run.pid);
    expect(pidAlive(run.pid)).toBe(false);
    const files = await checkFiles(dir);
    figures.tornTails += files.tornTail ? 1 : 0;
    figures.tempFilesLeft += files.temps;
    figures.journalLines += files.journalLines;

    const core = await FileCore.open({ dir, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS });
    try {
      const { state } = core.store.bank;
      // Limit: the last acknowledged amount, or the one that was in flight when the kill came.
      const limit = state.entities.get('ENT-1001')!.creditLimitMinor;
      expect([BigInt(50_000 + lastLimit) * 100n, BigInt(50_000 + lastLimit + 1) * 100n]).toContain(limit);
      if (limit !== BigInt(50_000 + lastLimit) * 100n) figures.inFlightApplied++;
      // Physical: every acknowledged upgrade is there; past them, at most the one in flight.
      for (let n = 0; n <= lastPhysical; n++) {
        expect(state.cards.get(`CARD-X${xid(n)}`)).toMatchObject({ form: 'PHYSICAL', kitNo: `KIT-X${xid(n)}` });
      }
      const inFlight = state.cards.get(`CARD-X${xid(lastPhysical + 1)}`);
      if (inFlight?.form === 'PHYSICAL') figures.inFlightApplied++;
      for (let n = lastPhysical + 2; n < Math.min(PHYSICAL_COUNT, lastPhysical + 200); n++) {
        expect(state.cards.get(`CARD-X${xid(n)}`)?.form).toBe('VIRTUAL');
      }
    } finally {
      await core.close();
    }
  }
  // The last re-open removed what the kills left behind.
  expect((await readdir(dir)).sort()).toEqual([JOURNAL_FILE, SNAPSHOT_FILE]);
  console.info(`file crash test: ${ITERATIONS} kills, ${figures.acknowledged} writes acknowledged, all present`, figures);
  expect(figures.acknowledged).toBeGreaterThan(ITERATIONS);
}, 900_000);
