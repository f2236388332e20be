#!/usr/bin/env node
// `node bin/file-times.js <vitest JSON report of a whole run>`: rewrites test/file-times.json (vitest.config.ts). A file
// none of whose tests ran there (no browser, no Prometheus on that machine) is left out: it starts first (decision 0429).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const [report] = process.argv.slice(2);
if (!report) {
  process.stderr.write('usage: node bin/file-times.js <vitest JSON report of a whole run>\n');
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const times = {};
for (const file of JSON.parse(readFileSync(report, 'utf8')).testResults) {
  if (!existsSync(file.name) || !file.assertionResults.some((t) => t.status !== 'skipped' && t.status !== 'pending' && t.status !== 'todo')) continue;
  const seconds = Math.max(0.01, Math.round(file.endTime - file.startTime) / 1000);
  times[relative(root, file.name).split(sep).join('/')] = Number(seconds.toFixed(2));
}
const sorted = Object.fromEntries(Object.entries(times).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)));
writeFileSync(new URL('../test/file-times.json', import.meta.url), `${JSON.stringify(sorted, null, 2)}\n`);
process.stderr.write(`test/file-times.json: ${Object.keys(sorted).length} files\n`);
