// The CLI against a running gateway's management API (`--admin-url`, or CARDLINE_ADMIN_URL), with the
// operator key from CARDLINE_OPERATOR_KEY: the store stays the gateway's, so an operator can onboard while the
// embedded store is open. Answers are JSON; a refusal becomes the CLI's one-line error with the API's words.
import type { Command } from 'commander';
import { PAGE_MAX } from '../../schemas/page.js';
import { fail } from './common.js';

/** What the management API answers: `{ result }` (or a bare key set), or a problem. */
interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  businessCode?: string;
  fieldErrors?: { field: string; message: string }[];
}

export class ManagementApi {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
  ) {}

  /** Calls the API; resolves the parsed body of a 2xx, fails with the problem's words otherwise. */
  async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { authorization: `Bearer ${this.key}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return fail(`Cannot reach the management API at ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (err as Error).message}. Is the gateway running, and is this its CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT?`);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: named below
    }
    if (res.ok) {
      if (parsed === undefined) fail(`The management API answered ${res.status} without a JSON body.`);
      return parsed as T;
    }
    const p = (parsed ?? {}) as Problem;
    const fields = p.fieldErrors?.length ? ` (${p.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '';
    const code = p.businessCode ? ` [${p.businessCode}]` : '';
    return fail(`The management API refused: ${res.status} ${p.title ?? res.statusText}${code}: ${p.detail ?? text.slice(0, 200)}${fields}`);
  }

  /** The `result` of an enveloped answer. */
  async result<T>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return (await this.call<{ result: T }>(method, path, body)).result;
  }

  /** Every item of a paged list: the largest pages, following `pagination.nextCursor` to the end. */
  async all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=${PAGE_MAX}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page: { result: T[]; pagination: { nextCursor: string | null } } = await this.call('GET', `${path}${query}`);
      items.push(...page.result);
      cursor = page.pagination.nextCursor;
    } while (cursor !== null);
    return items;
  }
}

/**
 * The management API this command should use, or null to work on the store directly: `--admin-url` (on the
 * program, before the command) or CARDLINE_ADMIN_URL. The operator key only ever comes from the environment
 * (CARDLINE_OPERATOR_KEY): an argument would be visible to every user of the machine in the process list.
 */
export function managementApi(command: Command): ManagementApi | null {
  const opts = command.optsWithGlobals<{ adminUrl?: string }>();
  const url = opts.adminUrl ?? (process.env.CARDLINE_ADMIN_URL || undefined);
  if (!url) return null;
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    return fail(`--admin-url must be a URL such as http://127.0.0.1:8081, not '${url}'.`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') fail(`--admin-url must be an http or https URL, not '${url}'.`);
  const key = process.env.CARDLINE_OPERATOR_KEY;
  if (!key) fail('Set CARDLINE_OPERATOR_KEY to an operator key (`cardline operator-key create`, or the one the demo printed) to use the management API.');
  return new ManagementApi(base.toString(), key);
}

/** The help text of every command that can go either way. */
export const REMOTE_HELP = `
Management API:
  With --admin-url URL (before the command: cardline --admin-url URL <command> ...) or CARDLINE_ADMIN_URL,
  the command calls a running gateway's management API with the operator key in CARDLINE_OPERATOR_KEY (a
  password is sent as a JWE to the tenant's encryption key); a change reaches every gateway process within
  2 s. Otherwise the command works on the store directly.`;

/** `/v1/tenants/<id>…` with every segment escaped. */
export const apiPath = (...segments: string[]): string => `/v1/${segments.map(encodeURIComponent).join('/')}`;
