// A gateway process for the notification tests: started on a store, logged into, called over HTTP.
import { encryptCompact } from '../../src/crypto/jwe.js';
import { baseEnv, freePort, kill, start, waitReady, type Proc } from './process.js';

export class GatewayProcess {
  proc: Proc | undefined;
  base = '';
  /** The management listener (on a free port, unless the env names CARDLINE_ADMIN_PORT). */
  admin = '';

  constructor(
    private readonly env: Record<string, string>,
    private readonly password: string,
    private readonly args: string[] = ['--demo'],
  ) {}

  async start(): Promise<void> {
    const port = await freePort();
    const adminPort = this.env.CARDLINE_ADMIN_PORT ?? String(await freePort());
    this.base = `http://127.0.0.1:${port}`;
    this.admin = `http://127.0.0.1:${adminPort}`;
    this.proc = start(
      this.args,
      baseEnv({ LOG_LEVEL: 'warn', CARDLINE_ADMIN_PORT: adminPort, ...this.env, PORT: String(port), HOST: '127.0.0.1', CARDLINE_DEMO_PASSWORD: this.password }),
    );
    await waitReady(this.base, this.proc);
  }

  async token(username: string, tenant = 'demo'): Promise<string> {
    const keys = (await (await fetch(`${this.base}/api/keys`, { headers: { TENANT: tenant } })).json()) as { keys: Parameters<typeof encryptCompact>[1][] };
    const res = await fetch(`${this.base}/api/authenticate`, {
      method: 'POST',
      headers: { TENANT: tenant, 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: await encryptCompact(this.password, keys.keys[0]!) }),
    });
    if (res.status !== 200) throw new Error(`login of ${username}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id_token: string }).id_token;
  }

  // The answer's JSON, as the test reads it (its shape is the route's, checked by the test's expectations).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  kill(): Promise<void> {
    return kill(this.proc);
  }
}
