// How long /docs takes to draw, as a browser does it: Chromium (playwright-core, CHROMIUM_PATH or
// /usr/bin/chromium) opens the page of a running gateway N times and waits until every operation of the
// definition shown is drawn; prints the Chromium processes' CPU time (from /proc, steady under load) and the
// wall time, for the first section (what /docs opens on) and for the whole document (`urls.primaryName`).
//   npx tsx bench/docs-render.ts http://127.0.0.1:8080 [runs]
import { readFileSync, readdirSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [base, runs = '3'] = process.argv.slice(2);
if (!base) throw new Error('usage: npx tsx bench/docs-render.ts <gateway origin> [runs]');
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const operations = (doc: { paths?: Record<string, Record<string, unknown>> }): number => Object.values(doc.paths ?? {}).reduce((n, p) => n + Object.keys(p).filter((m) => METHODS.has(m)).length, 0);

/** CPU time (ms) of every process below this one: the browser's. */
function childrenCpu(): number {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(pid), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // gone meanwhile
    }
  }
  const below = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, s] of stats) {
      if (!below.has(pid) && below.has(s.ppid)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  below.delete(process.pid);
  return [...below].reduce((sum, pid) => sum + (stats.get(pid)?.ticks ?? 0), 0) * 10;
}

const init = await (await fetch(`${base}/docs/static/swagger-initializer.js`)).text();
const urls = ((JSON.parse(/const config = (\{.*\})/.exec(init)?.[1] ?? '{}') as { urls?: { url: string; name: string }[] }).urls ?? []);
const views = [
  ...(urls[0] ? [{ name: `first section (${urls[0].name})`, query: '', url: urls[0].url }] : []),
  { name: 'the whole document', query: urls.length ? `?urls.primaryName=${encodeURIComponent(urls[urls.length - 1]!.name)}` : '', url: '/openapi.json' },
];
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
for (const view of views) {
  const doc = await (await fetch(`${base}${view.url}`)).text();
  const expected = operations(JSON.parse(doc));
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < Number(runs); i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const c0 = childrenCpu();
    const t0 = Date.now();
    await page.goto(`${base}/docs/${view.query}`);
    await page.waitForFunction(`document.querySelectorAll('.opblock').length >= ${expected}`, undefined, { timeout: 300_000, polling: 200 });
    wall.push(Date.now() - t0);
    cpu.push(childrenCpu() - c0);
    await page.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${view.name}: ${doc.length} bytes, ${expected} operations; Chromium CPU median ${median(cpu)} ms (${cpu.join(', ')}), wall median ${median(wall)} ms (${wall.join(', ')})`);
}
await browser.close();
