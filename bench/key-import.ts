// What an imported gateway key costs (decisions 0209, 0214; CARDLINE_KEY_CACHE_MAX in docs/operating.md): BENCH_KEYS
// (default 2000) ES256 key pairs, each half imported as the key ring imports it (jose's importJWK) and kept; prints
// per key half the RSS it adds after a full collection (native memory: OpenSSL's key objects) and the CPU time
// of one import. Run with --expose-gc so that garbage is not counted:
//   node --expose-gc --import tsx bench/key-import.ts
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

const KEYS = Number(process.env.BENCH_KEYS || '2000');

if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
const gc = global.gc;

const pairs: { publicJwk: JWK; privateJwk: JWK }[] = [];
for (let i = 0; i < KEYS; i++) {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  pairs.push({ publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) });
}

/** Every imported key stays alive to the end: memory freed by one half would be reused by the next (RSS never shrinks). */
const alive: unknown[][] = [];

async function measure(half: 'publicJwk' | 'privateJwk'): Promise<{ kbPerKey: number; usPerImport: number }> {
  gc();
  const rss0 = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const kept: unknown[] = [];
  alive.push(kept);
  for (const p of pairs) kept.push(await importJWK(p[half], 'ES256'));
  const cpu = process.cpuUsage(cpu0);
  gc();
  const rss = process.memoryUsage().rss - rss0;
  return { kbPerKey: Number((rss / 1024 / KEYS).toFixed(1)), usPerImport: Math.round((cpu.user + cpu.system) / KEYS) };
}

const publicHalf = await measure('publicJwk');
const privateHalf = await measure('privateJwk');
process.stdout.write(`${JSON.stringify({ keys: KEYS, public: publicHalf, private: privateHalf })}\n`);
