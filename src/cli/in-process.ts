// The CLI's store mode (no --admin-url): the management listener's own app, built in this process over the
// store and never listening, answers the CLI's typed client through `app.inject` (decision 0198). So a change
// made on the store runs the same operation entry through the same pipeline as over HTTP — validation, the
// decrypt step, idempotency, the audit record and the security event in one statement — with the principal
// `cli:<os-user>` (role Operator). That principal is a per-process random secret handed to the app builder
// and presented only by injected requests; the operator-auth step refuses it on a listening app.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { Operator } from '../services/identity/operator-keys.js';
import { IN_PROCESS_HEADER } from '../plugins/operator-auth.js';
import { cliActor } from '../services/admin-actions.js';
import { ManagementApi, type Answer, type ManagementOperationId, type Problem, type Transport } from './remote.js';
import { withStore, type StoreOptions } from './store.js';

/** The CLI's principal: `cli:<os-user>` (the OS account as the audit actor, decision 0195). */
export const cliOperator = (env: NodeJS.ProcessEnv = process.env): Operator => ({ name: cliActor(env).name });

/** A refusal as the store commands word it: by business code or error code, else the problem's detail. */
export type RefusalMessages = Record<string, string>;

/**
 * Runs `fn` with a ManagementApi answered in process by the management listener's app over the store, with
 * the routes of `operations` only (no document, no console: nothing else is called). The master key is needed (the services, the decrypt step, idempotency are the gateway's). Every record is
 * committed before the store closes.
 */
export async function withManagement<T>(
  opts: Pick<StoreOptions, 'create'> & { messages?: RefusalMessages; operations: readonly ManagementOperationId[] },
  fn: (api: ManagementApi) => Promise<T>,
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
        const messages = opts.messages ?? {};
        const transport: Transport = {
          where: 'the store',
          async send(method, path, body): Promise<Answer> {
            const res = await app.inject({
              method,
              url: path,
              headers: { [IN_PROCESS_HEADER]: secret, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
              ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
            });
            return { status: res.statusCode, statusText: res.statusMessage, text: res.body };
          },
          refusal(answer: Answer, p: Problem): string {
            const key = p.businessCode ?? p.code;
            const fields = p.fieldErrors?.length ? ` (${p.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '';
            return (key !== undefined ? messages[key] : undefined) ?? messages[String(answer.status)] ?? `${p.detail ?? p.title ?? answer.statusText}${fields}`;
          },
        };
        return await fn(new ManagementApi(transport));
      } finally {
        await app.close();
      }
    } finally {
      await close();
    }
  });
}
