// The client: one Cardline per tenant and user. It logs in with the password as a JWE, renews its token
// before it expires, sends each operation of the table with its retries, and answers in the route's dialect.
import { decodeJwt, type JWK } from 'jose';
import { encryptTo } from './crypto.js';
import { CardlineConnectionError } from './errors.js';
import { bindOperations, OPERATIONS, type Operations } from './generated/operations.js';
import { CardlineHttp, type HttpOptions } from './http.js';
import type { OperationMeta } from './transport.js';
import { webhooks } from './webhooks.js';

export type { RetryOptions } from './http.js';

export interface Credentials {
  username: string;
  password: string;
}

export interface CardlineOptions extends HttpOptions {
  /** The tenant id assigned at onboarding (sent as the TENANT header). */
  tenant: string;
  /**
   * Where renewal gets credentials: called whenever a new token is needed (before the current one expires, or
   * after a 401). Without it, renewal reuses the password given to `login`, kept in this object's memory.
   */
  credentials?: () => Credentials | Promise<Credentials>;
  /** Send every body as a JWE (`application/jose`): for tenants with `encryption.requireEncryptedBody`. */
  encryptBodies?: boolean;
  /**
   * Encrypt the fields an operation accepts as JWEs (passwords, address lines, contact details, PIN blocks) in
   * plain JSON bodies, each to the tenant's active key; default true, as `CardlineAdmin` does. false sends them
   * as they are: a password only a tenant with `encryption.allowPlaintextPassword` accepts.
   */
  encryptFields?: boolean;
  /** The private half of the client key registered with PUT /v1/admin/client-key: opens sealed fields (`decrypt: true`). */
  clientKey?: JWK;
  /** Renew the token this long before it expires; default 60 s (a tenth of the lifetime for shorter ones). */
  renewBeforeSeconds?: number;
}

interface Token {
  value: string;
  /** Seconds since the epoch. */
  exp: number;
  iat: number;
}

// The generated methods (bound in the constructor) as members of the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Cardline extends Operations {}

/**
 * A client of one tenant, logged in as one user:
 *
 *     const cl = new Cardline({ baseUrl: 'http://localhost:8080', tenant: 'demo' });
 *     await cl.login('integration', password);
 *     await cl.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '75000.00' });
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Cardline extends CardlineHttp {
  /** Standard Webhooks verification and typed events of record. */
  static readonly webhooks = webhooks;

  readonly tenantId: string;
  private readonly opts: CardlineOptions;
  private token: Token | undefined;
  private renewing: Promise<void> | undefined;
  private remembered: Credentials | undefined;
  private gatewayKey: JWK | undefined;

  constructor(options: CardlineOptions) {
    super(options);
    this.opts = options;
    this.tenantId = options.tenant;
    Object.assign(this, bindOperations(this));
  }

  /**
   * Logs in: fetches the tenant's gateway key (GET /api/keys), sends the password as a JWE to it and keeps the
   * token. Without a `credentials` callback the password is kept to log in again before the token expires.
   */
  async login(username: string, password: string): Promise<void> {
    if (!this.opts.credentials) this.remembered = { username, password };
    await this.authenticateWith({ username, password });
  }

  /** Forgets the token and the remembered password. */
  logout(): void {
    this.token = undefined;
    this.remembered = undefined;
  }

  /** When the current token expires (ms since the epoch), or undefined before login. */
  get tokenExpiresAt(): number | undefined {
    return this.token ? this.token.exp * 1000 : undefined;
  }

  /** Encrypts a value to the tenant's active gateway key: for a field the SDK does not encrypt itself. */
  async encrypt(plaintext: string): Promise<string> {
    // The JWE's iat is the real time: the gateway checks it to ±300 s.
    return encryptTo(await this.key(), plaintext);
  }

  private async key(refresh = false): Promise<JWK> {
    if (!this.gatewayKey || refresh) {
      const jwks = (await this.call(OPERATIONS['keys.public'], [], undefined, undefined)) as { keys: JWK[] };
      // The first key is the active one; the others are retiring after a rotation.
      this.gatewayKey = jwks.keys[0];
      if (!this.gatewayKey) throw new Error(`Tenant ${this.tenantId} publishes no encryption key`);
    }
    return this.gatewayKey;
  }

  private async authenticateWith(credentials: Credentials): Promise<void> {
    // An unset environment variable would otherwise be sent as no password, and refused as a validation error.
    for (const name of ['username', 'password'] as const) {
      const value: unknown = (credentials as Partial<Credentials> | undefined)?.[name];
      if (typeof value !== 'string' || value === '') throw new TypeError(`Cardline login: the ${name} must be a non-empty string, got ${value === '' ? 'an empty string' : typeof value}`);
    }
    // Keys rotate: every login encrypts to the key published now.
    await this.key(true);
    const answer = (await this.call(OPERATIONS.authenticate, [], credentials, undefined, { encryptFields: true })) as { id_token: string };
    const claims = decodeJwt(answer.id_token);
    const iat = claims.iat ?? Math.floor(this.now() / 1000);
    this.token = { value: answer.id_token, exp: claims.exp ?? iat + 3600, iat };
  }

  /** Logs in again, once for all concurrent callers. */
  private renew(): Promise<void> {
    this.renewing ??= (async () => {
      const credentials = this.opts.credentials ? await this.opts.credentials() : this.remembered;
      if (!credentials) throw new CardlineConnectionError('Not logged in: call login() first', 0, undefined);
      await this.authenticateWith(credentials);
    })().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async bearer(): Promise<string> {
    const t = this.token;
    const nowS = this.now() / 1000;
    const margin = this.opts.renewBeforeSeconds ?? Math.min(60, (t ? t.exp - t.iat : 600) / 10);
    if (!t || nowS >= t.exp - margin) await this.renew();
    return this.token!.value;
  }

  protected baseHeaders(): Record<string, string> {
    return { TENANT: this.tenantId };
  }

  protected async authHeaders(): Promise<Record<string, string>> {
    return { authorization: `Bearer ${await this.bearer()}` };
  }

  /** A refused token is forgotten and the call resent once, when there are credentials to log in again with. */
  protected override reauthenticate(): boolean {
    if (!this.opts.credentials && !this.remembered) return false;
    this.token = undefined;
    return true;
  }

  /** Everything is encrypted to the tenant's active gateway key. */
  protected encryptFor(_op: OperationMeta, _params: readonly string[], plaintext: string): Promise<string> {
    return this.encrypt(plaintext);
  }

  protected encryptionDefaults(): { body: boolean; fields: boolean } {
    return { body: this.opts.encryptBodies ?? false, fields: this.opts.encryptFields ?? true };
  }

  protected override openingKey(): JWK | undefined {
    return this.opts.clientKey;
  }
}
