// Shared pieces of the CLI: one-line errors, argument checks, stdin and output. No store imports here,
// so that `--help`, `master-key` and `encrypt --gateway` start without loading the store.
import { InvalidArgumentError } from 'commander';
import { MONEY_PATTERN } from '../../schemas/common.js';
import { TENANT_ID_PATTERN } from '../../schemas/tenant.js';
import type { PublicJwk } from '../crypto/keys.js';

/** An expected failure: printed as one line on stderr, exit code 1, no stack. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export function fail(message: string): never {
  throw new CliError(message);
}

const TENANT_ID = new RegExp(TENANT_ID_PATTERN);

/** Commander argument parser for tenant ids: the message names the rule. */
export function tenantId(value: string): string {
  if (!TENANT_ID.test(value)) {
    throw new InvalidArgumentError(
      `'${value}' is not a tenant id: 1-63 lower-case letters, digits and dashes, starting with a letter or digit.`,
    );
  }
  return value;
}

export function integer(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a whole number.`);
  return Number(value);
}

const MONEY = new RegExp(MONEY_PATTERN);

export function money(value: string): string {
  if (!MONEY.test(value)) throw new InvalidArgumentError(`'${value}' is not a positive decimal with at most two decimals (e.g. 250000.00).`);
  return value;
}

/** A public JWK with its members in the conventional order (the store's jsonb does not keep it). */
export function orderedJwk(k: PublicJwk): PublicJwk {
  return { kty: k.kty, crv: k.crv, x: k.x, y: k.y, kid: k.kid, use: k.use, alg: k.alg };
}

/** Reads stdin to its end; one trailing newline (as `echo` or a heredoc adds) is dropped. */
/** A username as the API takes it, checked before anything is sent; `flag` names the option in the message. */
export function checkUsername(username: string, flag = '--username'): void {
  if (username.length < 1 || username.length > 128 || username.trim() !== username || /\p{Cc}/u.test(username)) {
    fail(`${flag} must be 1-128 characters, without control characters or surrounding spaces.`);
  }
}

export async function readStdin(what: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(`Reading ${what} from stdin; finish with Enter and Ctrl-D.\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Rows as aligned columns (the first row is the header). */
export function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows) process.stdout.write(r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ') + '\n');
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export const STORE_HELP = `
Store:
  PostgreSQL at DATABASE_URL when it is set; otherwise the embedded PGlite store in
  CARDLINE_DATA_DIR (default ./data). The master key comes from CARDLINE_MASTER_KEY, or from
  <data dir>/master.key (written by the demo server).

  PGlite is single-process: running this command against a data directory that a running
  gateway holds open can corrupt it. Stop the gateway first, or use DATABASE_URL (safe while
  gateways run). The store is locked while a process holds it (<data dir>/pglite/cardline.lock);
  a lock left by a killed process goes stale after 30 seconds.`;
