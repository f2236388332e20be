// The platform operator's client: one CardlineAdmin per operator key, on the management listener. Its methods
// are generated from the management operation table (decision 0152); passwords for a tenant's users leave
// encrypted to that tenant's key, as the public login's do (decision 0153).
import type { JWK } from 'jose';
import { encryptTo } from './crypto.js';
import { bindManagementOperations, MANAGEMENT_OPERATIONS, type ManagementOperations } from './generated/management.js';
import { CardlineHttp, type HttpOptions } from './http.js';
import type { OperationMeta } from './transport.js';

/**
 * The operations console's credential: a page served by the management listener itself signs in once and holds
 * a session cookie (the browser sends it on every same-origin request; the page never reads it) and the
 * session's CSRF token, which every change must carry.
 */
export interface ConsoleSession {
  /** The session's CSRF token, read as each change is sent (it is `X-CSRF-Token`'s value). */
  csrfToken: () => string;
}

/**
 * Who the calls are. One of: `operatorKey` (any process that can reach the listener), `session` (a page of the
 * listener's own origin), or neither when an injected `fetch` authenticates each request itself (the CLI hands
 * its requests to the management app in its own process, as its own principal).
 */
export interface CardlineAdminOptions extends HttpOptions {
  /** An operator key (`clop_…`: `npx cardline operator-key create --name <name>`), sent as `Authorization: Bearer`. */
  operatorKey?: string;
  /** The console's cookie session and CSRF token, instead of an operator key (`baseUrl`: the page's origin). */
  session?: ConsoleSession;
  /**
   * Encrypt the password of a tenant's user to the tenant's key (`GET /v1/tenants/{tenantId}/keys`; a new tenant's
   * first Admin: the onboarding key); default true. false sends it in plain text, where the tenant allows it.
   */
  encryptPasswords?: boolean;
}

// The generated methods (bound in the constructor) as members of the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface CardlineAdmin extends ManagementOperations {}

/**
 * A client of the management listener (CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT), as one operator:
 *
 *     const admin = new CardlineAdmin({ baseUrl: 'http://127.0.0.1:8081', operatorKey: process.env.CARDLINE_OPERATOR_KEY! });
 *     await admin.tenant.create({ id: 'acme', name: 'Acme Bank', config, admin: { username: 'root', password } });
 *     await admin.tenantUser.create('acme', { username: 'alice', role: 'Operations', password });
 *
 * The operations console is the same client in the browser (`session`), and the CLI the same client with an
 * injected `fetch` (over the network, or into the management app in its own process).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class CardlineAdmin extends CardlineHttp {
  readonly #operatorKey: string | undefined;
  readonly #session: ConsoleSession | undefined;
  readonly #encryptPasswords: boolean;

  constructor(options: CardlineAdminOptions) {
    super(options);
    if (options.operatorKey !== undefined && options.session) throw new TypeError('CardlineAdmin takes an operatorKey or a session, not both');
    if (!options.operatorKey && !options.session && !options.fetch) {
      throw new TypeError('CardlineAdmin needs an operatorKey (or a console session, or a fetch that authenticates its requests)');
    }
    this.#operatorKey = options.operatorKey || undefined;
    this.#session = options.session;
    this.#encryptPasswords = options.encryptPasswords ?? true;
    Object.assign(this, bindManagementOperations(this));
  }

  protected baseHeaders(): Record<string, string> {
    return {};
  }

  protected async authHeaders(op: OperationMeta): Promise<Record<string, string>> {
    if (this.#operatorKey) return { authorization: `Bearer ${this.#operatorKey}` };
    // The cookie goes with every same-origin request (fetch's default credentials); a change also needs the token.
    if (this.#session && op.method !== 'GET') return { 'x-csrf-token': this.#session.csrfToken() };
    return {};
  }

  /**
   * A password for a tenant's user is encrypted to that tenant's active key (the first of its key set), fetched
   * for every request: keys rotate, and a JWE is accepted once, so each attempt encrypts anew anyway.
   */
  protected async encryptFor(op: OperationMeta, params: readonly string[], plaintext: string): Promise<string> {
    const at = op.tenantParam === undefined ? -1 : op.params.indexOf(op.tenantParam);
    const tenantId = at < 0 ? undefined : params[at];
    // The JWE's iat is the real time: the gateway checks it to ±300 s.
    if (tenantId !== undefined) return encryptTo(await this.firstKey(MANAGEMENT_OPERATIONS['tenant.keys'], [tenantId], `Tenant ${tenantId}`), plaintext);
    // A tenant created with its first Admin has no key yet: that password goes to the gateway's onboarding key.
    if (op.id === 'tenant.create') return encryptTo(await this.firstKey(MANAGEMENT_OPERATIONS['tenant.onboarding-keys'], [], 'The gateway'), plaintext);
    throw new Error(`${op.id} names no tenant whose key a value could be encrypted to`);
  }

  private async firstKey(op: OperationMeta, params: string[], who: string): Promise<JWK> {
    const jwks = (await this.call(op, params, undefined, undefined)) as { keys: JWK[] };
    const key = jwks.keys[0];
    if (!key) throw new Error(`${who} publishes no encryption key`);
    return key;
  }

  protected encryptionDefaults(): { body: boolean; fields: boolean } {
    return { body: false, fields: this.#encryptPasswords };
  }
}
