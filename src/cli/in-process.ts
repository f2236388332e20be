// The CLI's store mode: the management app built in process answers CardlineAdmin through an injected fetch
// (decisions 0198, 0250), so a change runs the same pipeline as over HTTP as `cli:<os-user>`. That principal is
// a per-process secret only injected requests present; a listening app refuses it.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Operator } from '../services/identity/operator-keys.js';
import { IN_PROCESS_HEADER } from '../plugins/operator-auth.js';
import { storeRefusal, type ManagementOperationId, type RefusalMessages, type Target } from './remote.js';
import { withStore, type StoreOptions } from './store.js';

/** The longest actor name an audit record keeps. */
const MAX_ACTOR = 128;

/** The CLI's principal `cli:<os-user>` (decision 0195), from the password database, USER/LOGNAME or the uid. */
export function cliOperator(env: NodeJS.ProcessEnv = process.env): Operator {
  let user: string | undefined;
  try {
    user = os.userInfo().username || undefined;
  } catch {
    // no passwd entry for this uid
  }
  user ??= env.USER || env.LOGNAME || (typeof process.getuid === 'function' ? `uid-${process.getuid()}` : 'unknown');
  return { name: `cli:${user}`.slice(0, MAX_ACTOR) };
}

/** The SDK's fetch answered in process by `app.inject`, with the secret that makes it the CLI's principal. */
export function injectFetch(app: FastifyInstance, secret: string): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const res = await app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: `${url.pathname}${url.search}`,
      headers: { ...headers, [IN_PROCESS_HEADER]: secret },
      ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
    });
    const answer = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) answer.append(name, String(v));
    }
    return new Response(res.statusCode === 204 ? null : res.rawPayload, { status: res.statusCode, statusText: res.statusMessage, headers: answer });
  };
}

/** Runs `fn` against the management app in process over the store, with only `operations`' routes; needs the master key. */
export async function withManagement<T>(
  opts: Pick<StoreOptions, 'create'> & { messages?: RefusalMessages; operations: readonly ManagementOperationId[] },
  fn: (target: Target) => Promise<T>,
): Promise<T> {
  return withStore({ masterKey: true, ...(opts.create ? { create: true } : {}) }, async (store) => {
    const [{ createServices }, { buildManagementApp }, { resolveMasterKey }] = await Promise.all([
      import('../services/index.js'),
      import('../management/app.js'),
      import('../bootstrap.js'),
    ]);
    const logger = pino({ enabled: false });
    const masterKey = resolveMasterKey(store.config, { allowGenerate: false, allowFile: true });
    // Built, never started: no tenant's connector starts, no delivery worker runs, and a command sets no PIN.
    const { services, close } = await createServices({ config: store.config, db: store.db, masterKey, log: logger, ownsDb: false, hsm: null });
    try {
      const secret = randomBytes(32).toString('base64url');
      const { managementOperations } = await import('../operations/index.js');
      const operations = managementOperations.filter((o) => opts.operations.includes(o.id as ManagementOperationId));
      const app = await buildManagementApp({ services, config: store.config, logger, inProcess: { secret, operator: cliOperator() }, operations });
      try {
        // The host is never resolved: the injected fetch hands the path to the app.
        return await fn({ where: 'the store', client: { baseUrl: 'http://in-process.invalid', fetch: injectFetch(app, secret) }, refusal: storeRefusal(opts.messages) });
      } finally {
        await app.close();
      }
    } finally {
      await close();
    }
  });
}
