// The mock core process's configuration: command-line flags over MOCK_CORE_* variables over defaults.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { FaultConfigUpdate } from '../../schemas/core-protocol.js';
import { isLoopback } from '../config.js';
import type { MockCoreAuth } from '../../connectors/mock-core/server.js';

export interface MockCoreConfig {
  host: string;
  port: number;
  dataDir: string;
  fixtures: 'demo' | 'empty';
  faults: FaultConfigUpdate;
  maxHoldMs: number;
  auth: MockCoreAuth;
  allowRemote: boolean;
  logLevel: string;
  printOpenApi: boolean;
  help: boolean;
}

export class MockCoreConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MockCoreConfigError';
  }
}

export const USAGE = `Usage: npm run mock-core -- [options]

Starts the Cardline mock core: simulated banks speaking the core REST protocol v1
(schemas/core-protocol.openapi.json) at http://<host>:<port>/banks/<bankId>/v1/...

Options (environment variable in brackets):
  --host <addr>          listen address, default 127.0.0.1                    [MOCK_CORE_HOST]
  --port <n>             listen port, default 9090 (0 picks a free one)       [MOCK_CORE_PORT]
  --data-dir <dir>       bank snapshots, default ./data/mock-core             [MOCK_CORE_DATA_DIR]
  --fixtures demo|empty  what a new bank starts from, default demo            [MOCK_CORE_FIXTURES]
  --latency-ms <n>       delay before every operation, default 0              [MOCK_CORE_LATENCY_MS]
  --error-rate <0..1>    share of operations answered 503, default 0          [MOCK_CORE_ERROR_RATE]
  --timeout-rate <0..1>  share of operations never answered, default 0        [MOCK_CORE_TIMEOUT_RATE]
  --reset-rate <0..1>    share of operations whose connection is reset        [MOCK_CORE_RESET_RATE]
  --seed <n>             seed of the fault PRNG, default 1                    [MOCK_CORE_SEED]
  --max-hold-ms <n>      how long a timeout fault holds a request, max 60000  [MOCK_CORE_MAX_HOLD_MS]
  --bearer-token <t>     require Authorization: Bearer <t> on bank routes     [MOCK_CORE_BEARER_TOKEN]
  --basic-auth <u:p>     require HTTP basic credentials on bank routes        [MOCK_CORE_BASIC_AUTH]
  --allow-remote         allow a non-loopback --host (admin routes are open!) [MOCK_CORE_ALLOW_REMOTE=1]
  --log-level <level>    pino level, default info                             [LOG_LEVEL]
  --print-openapi        print the protocol's OpenAPI document and exit
  --help                 this text
`;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(value: string, name: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new MockCoreConfigError(`${name} must be a whole number, got '${value}'`);
  const n = Number(value);
  if (n < min || n > max) throw new MockCoreConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function rate(value: string, name: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new MockCoreConfigError(`${name} must be a number from 0 to 1, got '${value}'`);
  return n;
}

export function parseMockCoreArgs(argv: string[], env: NodeJS.ProcessEnv = {}): MockCoreConfig {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        fixtures: { type: 'string' },
        'latency-ms': { type: 'string' },
        'error-rate': { type: 'string' },
        'timeout-rate': { type: 'string' },
        'reset-rate': { type: 'string' },
        seed: { type: 'string' },
        'max-hold-ms': { type: 'string' },
        'bearer-token': { type: 'string' },
        'basic-auth': { type: 'string' },
        'allow-remote': { type: 'boolean' },
        'log-level': { type: 'string' },
        'print-openapi': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    throw new MockCoreConfigError(`${(err as Error).message}\n\n${USAGE}`);
  }
  /** The flag's value, else the variable's; with the name to quote in an error. */
  const pick = (flag: keyof typeof parsed, variable: string): [string, string] | undefined => {
    const v = parsed[flag];
    if (typeof v === 'string') return [v, `--${flag}`];
    const e = env[variable];
    return e !== undefined && e !== '' ? [e, variable] : undefined;
  };

  const host = pick('host', 'MOCK_CORE_HOST')?.[0] ?? '127.0.0.1';
  const portArg = pick('port', 'MOCK_CORE_PORT');
  const fixturesArg = pick('fixtures', 'MOCK_CORE_FIXTURES');
  if (fixturesArg && fixturesArg[0] !== 'demo' && fixturesArg[0] !== 'empty') {
    throw new MockCoreConfigError(`${fixturesArg[1]} must be demo or empty, got '${fixturesArg[0]}'`);
  }

  const faults: FaultConfigUpdate = {};
  const latency = pick('latency-ms', 'MOCK_CORE_LATENCY_MS');
  if (latency) faults.latencyMs = integer(latency[0], latency[1], 0, 60_000);
  for (const [flag, variable, field] of [
    ['error-rate', 'MOCK_CORE_ERROR_RATE', 'errorRate'],
    ['timeout-rate', 'MOCK_CORE_TIMEOUT_RATE', 'timeoutRate'],
    ['reset-rate', 'MOCK_CORE_RESET_RATE', 'resetRate'],
  ] as const) {
    const v = pick(flag, variable);
    if (v) faults[field] = rate(v[0], v[1]);
  }
  const seed = pick('seed', 'MOCK_CORE_SEED');
  if (seed) faults.seed = integer(seed[0], seed[1], 0, 4_294_967_295);
  const hold = pick('max-hold-ms', 'MOCK_CORE_MAX_HOLD_MS');

  const bearer = pick('bearer-token', 'MOCK_CORE_BEARER_TOKEN');
  const basic = pick('basic-auth', 'MOCK_CORE_BASIC_AUTH');
  if (bearer && basic) throw new MockCoreConfigError('choose one of --bearer-token and --basic-auth');
  let auth: MockCoreAuth = { type: 'none' };
  if (bearer) auth = { type: 'bearer', token: bearer[0] };
  if (basic) {
    const i = basic[0].indexOf(':');
    if (i < 1) throw new MockCoreConfigError(`${basic[1]} must be <username>:<password>`);
    auth = { type: 'basic', username: basic[0].slice(0, i), password: basic[0].slice(i + 1) };
  }

  const allowRemote = parsed['allow-remote'] === true || env.MOCK_CORE_ALLOW_REMOTE === '1' || env.MOCK_CORE_ALLOW_REMOTE === 'true';
  if (!isLoopback(host) && !allowRemote) {
    throw new MockCoreConfigError(
      `--host ${host} is not a loopback address; the mock core's admin routes are unauthenticated. Pass --allow-remote to listen there anyway.`,
    );
  }

  const logLevel = pick('log-level', 'LOG_LEVEL');
  if (logLevel && !LOG_LEVELS.includes(logLevel[0])) {
    throw new MockCoreConfigError(`${logLevel[1]} must be one of ${LOG_LEVELS.join(', ')}, got '${logLevel[0]}'`);
  }

  return {
    host,
    port: portArg ? integer(portArg[0], portArg[1], 0, 65_535) : 9090,
    dataDir: resolve(pick('data-dir', 'MOCK_CORE_DATA_DIR')?.[0] ?? './data/mock-core'),
    fixtures: (fixturesArg?.[0] as 'demo' | 'empty' | undefined) ?? 'demo',
    faults,
    maxHoldMs: hold ? integer(hold[0], hold[1], 1, 60_000) : 60_000,
    auth,
    allowRemote,
    logLevel: logLevel?.[0] ?? 'info',
    printOpenApi: parsed['print-openapi'] === true,
    help: parsed.help === true,
  };
}
