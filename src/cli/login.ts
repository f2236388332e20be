// `cardline login`: logs a tenant's user in through the public API, as a client does — the tenant's key from
// GET /api/keys, the password encrypted to it as a compact JWE (the shared client crypto of `cardline
// encrypt`), POST /api/authenticate — and prints the token: for curl (`TOKEN=$(npx cardline login …)`) and
// for the /docs page's "Authorize" (decision 0196).
import { Command } from 'commander';
import { encryptCompact } from '../crypto/jwe.js';
import { fail, readStdin, tenantId } from './common.js';
import { keyFromGateway } from './encrypt.js';

interface LoginOptions {
  gateway: string;
  tenant: string;
  username: string;
  passwordStdin?: boolean;
  json?: boolean;
}

/** What POST /api/authenticate answered, as one line: the problem's or the envelope's words. */
function refusal(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const words = [body.title, body.detail ?? body.detailMessage ?? body.message].filter((v) => typeof v === 'string' && v !== '');
    if (words.length) return `${status} ${words.join(': ')}`;
  } catch {
    // not JSON
  }
  return `${status}`;
}

/** The claims of a JWT (unverified: only to say when it expires). */
function claimsOf(token: string): { exp?: number; role?: string } {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: number; role?: string };
  } catch {
    return {};
  }
}

export function loginCommand(): Command {
  return new Command('login')
    .description("Log a tenant's user in through the public API (the password sent as a JWE); prints the token.")
    .requiredOption('--tenant <id>', 'the tenant', tenantId)
    .requiredOption('--username <username>', 'the login name')
    .option('--gateway <url>', 'the gateway (also CARDLINE_GATEWAY_URL)', process.env.CARDLINE_GATEWAY_URL || 'http://localhost:8080')
    .option('--password-stdin', 'read the password from stdin (otherwise from CARDLINE_USER_PASSWORD)')
    .option('--json', 'print {"id_token", "expiresAt", "role"} instead of the bare token')
    .addHelpText(
      'after',
      `
The token goes to stdout, alone on its line, so that a shell can keep it; a note of who is logged in and
until when goes to stderr. The password comes from stdin (--password-stdin) or CARDLINE_USER_PASSWORD,
never from an argument. It is encrypted to the tenant's key of GET <gateway>/api/keys (ECDH-ES+A256KW,
A256GCM, a fresh iat and jti), as the SDK and the README's login do.

Examples:
  TOKEN=$(printf '%s' "$DEMO_PASSWORD" | npx cardline login --tenant demo --username integration --password-stdin)
  CARDLINE_USER_PASSWORD="$DEMO_PASSWORD" npx cardline login --gateway http://10.0.0.5:9090 --tenant demo --username admin

In the /docs page of the gateway: "Authorize" with the token, and give the TENANT header of each call.`,
    )
    .action(async (opts: LoginOptions) => {
      const password = opts.passwordStdin ? await readStdin('the password') : process.env.CARDLINE_USER_PASSWORD;
      if (!password) fail('No password: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.');
      const base = opts.gateway.replace(/\/+$/, '');
      const key = await keyFromGateway(base, opts.tenant);
      const jwe = await encryptCompact(password, key);
      const url = new URL(`${base}/api/authenticate`);
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { TENANT: opts.tenant, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ username: opts.username, password: jwe }),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
        return fail(`Could not reach the gateway at ${url.origin}: ${cause}`);
      }
      const text = await res.text();
      if (!res.ok) fail(`Login of '${opts.username}' on tenant '${opts.tenant}' refused: ${refusal(res.status, text)}.`);
      let token: unknown;
      try {
        token = (JSON.parse(text) as { id_token?: unknown }).id_token;
      } catch {
        // named below
      }
      if (typeof token !== 'string' || token === '') return fail(`The gateway's answer to POST ${url.pathname} holds no id_token.`);
      const { exp, role } = claimsOf(token);
      const expiresAt = typeof exp === 'number' ? new Date(exp * 1000).toISOString() : null;
      process.stdout.write(opts.json ? JSON.stringify({ id_token: token, expiresAt, role: role ?? null }) + '\n' : `${token}\n`);
      process.stderr.write(`Logged in as '${opts.username}'${role ? ` (${role})` : ''} on tenant '${opts.tenant}'${expiresAt ? `; the token expires at ${expiresAt}` : ''}.\n`);
    });
}
