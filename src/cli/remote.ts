// The CLI's management client is the SDK's CardlineAdmin, generated from the management table (decision 0250):
// over HTTP to a running gateway (`--admin-url` or CARDLINE_ADMIN_URL, the operator key from
// CARDLINE_OPERATOR_KEY), or, without one, into the management listener's own app built in this process over the
// store (src/cli/in-process.ts). Either way the same operation entries answer; a refusal becomes the CLI's
// one-line error in the API's words.
import type { Command } from 'commander';
import type { CardlineAdmin, CardlineAdminOptions } from '../../sdk/src/admin.js';
import type { ManagementOperationId } from '../../sdk/src/generated/management.js';
import type { CallOptions, OperationMeta } from '../../sdk/src/transport.js';
import { fail } from './common.js';

export type { CardlineAdmin, ManagementOperationId };

/** How a refusal reads, by business code or status (`{ TENANT_EXISTS: "Tenant 'x' already exists." }`). */
export type RefusalMessages = Record<string, string>;

/** Where a command's calls go: a running gateway, or the store through the listener's app in this process. */
export interface Target {
  /** Where the answers come from, for messages. */
  readonly where: string;
  /** The client's options besides the retry and the table: the base URL and who the calls are. */
  readonly client: Pick<CardlineAdminOptions, 'baseUrl' | 'operatorKey' | 'fetch'>;
  /** The CLI's one-line message for an answer that refused (none: the management API's words). */
  refusal?(problem: Refusal): string;
}

/** What the CLI words a refusal from: the problem record the API answered. */
export interface Refusal {
  status: number;
  title: string;
  detail: string | undefined;
  businessCode: string | undefined;
  fieldErrors: readonly { field: string; message: string }[];
}

const fieldsOf = (r: Refusal) => (r.fieldErrors.length ? ` (${r.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '');

/** The in-process refusal: the command's own words for a code or status, else the API's detail. */
export const storeRefusal =
  (messages: RefusalMessages = {}) =>
  (r: Refusal): string =>
    (r.businessCode !== undefined ? messages[r.businessCode] : undefined) ?? messages[String(r.status)] ?? `${r.detail ?? r.title}${fieldsOf(r)}`;

/** Over HTTP: the API's status, title, business code and detail. */
const httpRefusal = (r: Refusal): string =>
  `The management API refused: ${r.status} ${r.title}${r.businessCode ? ` [${r.businessCode}]` : ''}: ${r.detail ?? ''}${fieldsOf(r)}`;

/** A CardlineAdmin calling only the command's declared operations (decision 0104): a mistake fails in both modes. */
export async function commandAdmin(target: Target, operations: readonly ManagementOperationId[]): Promise<CardlineAdmin> {
  const { CardlineAdmin } = await import('../../sdk/src/admin.js');
  const declared = new Set<string>(operations);
  class CommandAdmin extends CardlineAdmin {
    override async call(op: OperationMeta, params: readonly string[], body: unknown, query: unknown, options?: CallOptions): Promise<unknown> {
      if (!declared.has(op.id)) throw new Error(`cardline: this command calls the operation '${op.id}' without declaring it in withApi's operations.`);
      return super.call(op, params, body, query, options);
    }
  }
  return new CommandAdmin(target.client);
}

/** The SDK's errors as the CLI's one line; anything else is thrown as it is. */
async function asCliError(err: unknown, target: Target): Promise<never> {
  const { CardlineConnectionError, CardlineProblemError } = await import('../../sdk/src/errors.js');
  if (err instanceof CardlineProblemError) {
    const refusal: Refusal = { status: err.status, title: err.title, detail: err.detail, businessCode: err.businessCode, fieldErrors: err.fieldErrors };
    return fail((target.refusal ?? httpRefusal)(refusal));
  }
  if (err instanceof CardlineConnectionError && err.status === 0) {
    // fetch's TypeError carries the socket's error (ECONNREFUSED, ENOTFOUND) as its cause.
    const cause = (err.cause as { cause?: { code?: string; message?: string }; message?: string } | undefined) ?? {};
    const reason = cause.cause?.code ?? cause.cause?.message ?? cause.message ?? err.message;
    return fail(`Cannot reach the management API at ${target.where}: ${reason}. Is the gateway running, and is this its CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT?`);
  }
  if (err instanceof CardlineConnectionError) return fail(`The management API at ${target.where} answered ${err.status}: ${err.message}`);
  throw err;
}

/**
 * The gateway to call (`--admin-url` or CARDLINE_ADMIN_URL), or null for the store; the operator key
 * comes only from CARDLINE_OPERATOR_KEY, since an argument shows in the process list.
 */
export function remoteTarget(command: Command): Target | null {
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
  if (!key) {
    fail(
      'Set CARDLINE_OPERATOR_KEY to an operator key to use the management API: the one the demo printed, or one an operator with a key creates for you: ' +
        `\`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${url} operator-key create --name <name>\`.`,
    );
  }
  return { where: base.toString(), client: { baseUrl: base.toString(), operatorKey: key } };
}

/** Runs `fn` with a client for `target`, its refusals and connection failures turned into the CLI's one line. */
export async function withTarget<T>(target: Target, operations: readonly ManagementOperationId[], fn: (api: CardlineAdmin) => Promise<T>): Promise<T> {
  const api = await commandAdmin(target, operations);
  try {
    return await fn(api);
  } catch (err) {
    return asCliError(err, target);
  }
}

/** The help text of every command that can go either way. */
export const REMOTE_HELP = `
Management API:
  With --admin-url URL (before the command: cardline --admin-url URL <command> ...) or CARDLINE_ADMIN_URL,
  the command calls a running gateway's management API with the operator key in CARDLINE_OPERATOR_KEY (a
  password is sent as a JWE to the tenant's encryption key); a change reaches every gateway process within
  2 s. Otherwise the command works on the store directly.`;
