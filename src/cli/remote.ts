// The CLI against a running gateway's management API (`--admin-url`, or CARDLINE_ADMIN_URL), with the
// operator key from CARDLINE_OPERATOR_KEY: the store stays the gateway's, so an operator can onboard while the
// embedded store is open. Answers are JSON; a refusal becomes the CLI's one-line error with the API's words.
import type { Command } from 'commander';
import { PAGE_MAX } from '../../schemas/page.js';
import type { OPERATION_TYPES } from '../operations/define.js';
import type { Operation } from '../operations/define.js';
import type { managementOperatorKeyOperations } from '../operations/management-operator-keys.js';
import type { managementTenantOperations } from '../operations/management-tenants.js';
import type { managementUserOperations } from '../operations/management-users.js';
import { fail } from './common.js';

/** The management table's entries, each with its literal id and its request's and answer's types. */
type ManagementEntry =
  | (typeof managementTenantOperations)[number]
  | (typeof managementUserOperations)[number]
  | (typeof managementOperatorKeyOperations)[number];
/** An operation of the management listener, by id: `tenant.create`, `tenant-user.list`, `operator-key.revoke`… */
export type ManagementOperationId = ManagementEntry['id'];
type TypesOf<Id extends ManagementOperationId> = NonNullable<Extract<ManagementEntry, { id: Id }>[typeof OPERATION_TYPES]>;
/** What a call of the operation sends: its path parameters, query and body, each only where it has one. */
export type ManagementInput<Id extends ManagementOperationId> = { [K in 'params' | 'query' | 'body' as undefined extends TypesOf<Id>[K] ? never : K]: TypesOf<Id>[K] } & {
  [K in 'params' | 'query' | 'body' as undefined extends TypesOf<Id>[K] ? K : never]?: TypesOf<Id>[K];
};
/** The paged lists: answered as `{ result: [...], pagination: { nextCursor } }`. */
export type ManagementListId = { [Id in ManagementOperationId]: ManagementAnswer<Id> extends { pagination: { nextCursor: string | null } } ? Id : never }[ManagementOperationId];
/** What the operation answers on success (its response schema's type). */
export type ManagementAnswer<Id extends ManagementOperationId> = TypesOf<Id>['answer'];

let table: Promise<ReadonlyMap<string, Operation>> | undefined;
/**
 * The management table by id, loaded on the first typed call only: a command that never calls the API (or
 * `--help`) does not load the operations and their services.
 */
export const managementTable = (): Promise<ReadonlyMap<string, Operation>> =>
  (table ??= import('../operations/index.js').then(({ managementOperations }) => new Map(managementOperations.map((op) => [op.id, op]))));

/** The operation's method, and its path with each `:name` replaced by its escaped parameter and its query string. */
export function managementRequest(
  byId: ReadonlyMap<string, Operation>,
  id: ManagementOperationId,
  input: { params?: unknown; query?: unknown },
): { method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'; path: string } {
  const op = byId.get(id);
  if (!op) throw new Error(`The management table has no operation '${id}'`);
  const params = (input.params ?? {}) as Record<string, string>;
  const path = op.url.replace(/:(\w+)/g, (_m, name: string) => {
    const value = params[name];
    if (typeof value !== 'string') throw new Error(`Operation ${id} needs the path parameter '${name}'`);
    return encodeURIComponent(value);
  });
  const query = new URLSearchParams(Object.entries((input.query ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)]));
  return { method: op.method, path: query.size ? `${path}?${query}` : path };
}

/** What the management API answers: `{ result }` (or a bare key set), or a problem. */
export interface Problem {
  code?: string;
  title?: string;
  status?: number;
  detail?: string;
  businessCode?: string;
  fieldErrors?: { field: string; message: string }[];
}

/** One answer of the management API, however it travelled. */
export interface Answer {
  status: number;
  statusText: string;
  text: string;
}

/**
 * How a request reaches the management listener: over HTTP (`--admin-url`), or injected into the listener's
 * own app built in this process (src/cli/in-process.ts). Either way the same operation entries answer.
 */
export interface Transport {
  /** Where the answers come from, for messages. */
  readonly where: string;
  send(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body: unknown): Promise<Answer>;
  /** The CLI's one-line message for a refusal; the default words it as the management API's. */
  refusal?(answer: Answer, problem: Problem): string;
}

/** Calls a running gateway's management API with an operator key. */
export class HttpTransport implements Transport {
  constructor(
    readonly where: string,
    private readonly key: string,
  ) {}

  async send(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body: unknown): Promise<Answer> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.where), {
        method,
        headers: { authorization: `Bearer ${this.key}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return fail(`Cannot reach the management API at ${this.where}: ${cause?.code ?? cause?.message ?? (err as Error).message}. Is the gateway running, and is this its CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT?`);
    }
    return { status: res.status, statusText: res.statusText, text: await res.text() };
  }
}

export class ManagementApi {
  readonly transport: Transport;
  /** The operations a command declared (withApi): calling another one is a mistake in the command, caught in both modes. */
  private declared: ReadonlySet<string> | null = null;
  constructor(transport: Transport);
  constructor(baseUrl: string, key: string);
  constructor(a: Transport | string, key?: string) {
    this.transport = typeof a === 'string' ? new HttpTransport(a, key!) : a;
  }

  /** Limits this client to the operations a command declared (see withApi). */
  only(ids: readonly ManagementOperationId[]): this {
    this.declared = new Set(ids);
    return this;
  }

  private check(id: string): void {
    if (this.declared && !this.declared.has(id)) throw new Error(`cardline: this command calls the operation '${id}' without declaring it in withApi's operations.`);
  }

  /** Calls the API; resolves the parsed body of a 2xx, fails with the problem's words otherwise. */
  async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const answer = await this.transport.send(method, path, body);
    const { status, statusText, text } = answer;
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: named below
    }
    if (status >= 200 && status < 300) {
      if (parsed === undefined) fail(`The management API answered ${status} without a JSON body.`);
      return parsed as T;
    }
    const p = (parsed ?? {}) as Problem;
    if (this.transport.refusal) return fail(this.transport.refusal(answer, p));
    const fields = p.fieldErrors?.length ? ` (${p.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '';
    const code = p.businessCode ? ` [${p.businessCode}]` : '';
    return fail(`The management API refused: ${status} ${p.title ?? statusText}${code}: ${p.detail ?? text.slice(0, 200)}${fields}`);
  }

  /**
   * Calls an operation of the management table by its id: method and path come from the entry, the input
   * and the answer are typed by its schemas (`api.operation('tenant-user.create', { params: { tenantId },
   * body: { username, role, password } })`).
   */
  async operation<Id extends ManagementOperationId>(id: Id, input: ManagementInput<Id>): Promise<ManagementAnswer<Id>> {
    this.check(id);
    const { method, path } = managementRequest(await managementTable(), id, input as { params?: unknown; query?: unknown });
    return this.call<ManagementAnswer<Id>>(method, path, (input as { body?: unknown }).body);
  }

  /**
   * Every item of a paged list of the management table, by its id (`tenant.list`, `tenant-user.list`,
   * `operator-key.list`), with the list's own query but its pages (`tenant.list`'s search `q`).
   */
  async allOf<Id extends ManagementListId>(
    id: Id,
    input: Omit<ManagementInput<Id>, 'query'> & { query?: Omit<NonNullable<TypesOf<Id>['query']>, 'limit' | 'cursor'> },
  ): Promise<ManagementAnswer<Id>['result']> {
    this.check(id);
    // Each page is the operation's answer; the items of all pages are its `result` type.
    return (await this.all(managementRequest(await managementTable(), id, input as { params?: unknown; query?: unknown }).path)) as ManagementAnswer<Id>['result'];
  }

  /** Every item of a paged list (its path may hold a query): the largest pages, following `pagination.nextCursor` to the end. */
  async all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `${path.includes('?') ? '&' : '?'}limit=${PAGE_MAX}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
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
  return new ManagementApi(new HttpTransport(base.toString(), key));
}

/** The help text of every command that can go either way. */
export const REMOTE_HELP = `
Management API:
  With --admin-url URL (before the command: cardline --admin-url URL <command> ...) or CARDLINE_ADMIN_URL,
  the command calls a running gateway's management API with the operator key in CARDLINE_OPERATOR_KEY (a
  password is sent as a JWE to the tenant's encryption key); a change reaches every gateway process within
  2 s. Otherwise the command works on the store directly.`;
