// Runs scenarios over a target, one fresh connector instance each, and reports pass/fail with reasons.
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorContext, ConnectorDefinition } from '../contract.js';
import { checkOptions } from '../loader.js';
import { ephemeralSecrets } from '../../src/crypto/connector-secrets.js';
import { scenarios as allScenarios } from './scenarios.js';
import type { ConformanceTarget, Report, Scenario, ScenarioResult } from './types.js';

export interface RunOptions {
  /** Defaults to every scenario of the suite. */
  scenarios?: Scenario[];
  /** Longest a scenario (and the instance's creation) may take. */
  timeoutMs?: number;
  /** Handed to connectors and call contexts; silent by default. */
  logger?: FastifyBaseLogger;
  /** Called as each scenario finishes, for streaming output. */
  onResult?: (result: ScenarioResult) => void;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const CALL_DEADLINE_MS = 5_000;

export const silentLogger = (): FastifyBaseLogger => pino({ level: 'silent' });

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const describeError = (err: unknown): string => {
  const e = err as Error;
  if (e?.name === 'ConformanceFailure') return e.message;
  return `threw ${e?.name ?? 'a non-error'}: ${String(e?.message ?? err).split('\n')[0]}`;
};

/** Runs one scenario on a fresh instance from `target.create()`, always cleaning the instance up. */
export async function runScenario(target: ConformanceTarget, scenario: Scenario, opts: RunOptions = {}): Promise<ScenarioResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const logger = opts.logger ?? silentLogger();
  const started = performance.now();
  const done = (ok: boolean, reason?: string): ScenarioResult => ({
    scenario: scenario.name,
    ok,
    ...(reason === undefined ? {} : { reason }),
    durationMs: Math.round(performance.now() - started),
  });

  let instance;
  try {
    instance = await withTimeout(target.create(), timeoutMs, `${target.name}: create()`);
  } catch (err) {
    return done(false, `could not create a connector instance: ${describeError(err)}`);
  }
  let n = 0;
  const ctx = (overrides: Partial<ConnectorContext> = {}): ConnectorContext => ({
    tenantId: 'conformance',
    requestId: `conformance-${++n}`,
    logger,
    signal: AbortSignal.timeout(CALL_DEADLINE_MS),
    ...overrides,
  });
  let reason: string | undefined;
  try {
    await withTimeout(scenario.run({ connector: instance.connector, ctx }), timeoutMs, 'the scenario');
  } catch (err) {
    reason = describeError(err);
  }
  try {
    await instance.cleanup();
  } catch (err) {
    reason ??= `cleanup failed: ${describeError(err)}`;
  }
  return done(reason === undefined, reason);
}

/** Runs every scenario (or `opts.scenarios`) in order, then disposes of the target. */
export async function runConformance(target: ConformanceTarget, opts: RunOptions = {}): Promise<Report> {
  const results: ScenarioResult[] = [];
  try {
    for (const scenario of opts.scenarios ?? allScenarios) {
      const result = await runScenario(target, scenario, opts);
      results.push(result);
      opts.onResult?.(result);
    }
  } finally {
    await target.dispose?.();
  }
  const passed = results.filter((r) => r.ok).length;
  return { target: target.name, passed, failed: results.length - passed, results };
}

/** Thrown when the options given for a target do not match the connector's schema; names the fields. */
export class ConformanceOptionsError extends Error {
  constructor(
    connectorId: string,
    readonly problems: string[],
  ) {
    super(`options for connector '${connectorId}' are invalid: ${problems.join('; ')}`);
    this.name = 'ConformanceOptionsError';
  }
}

/** Options for one fresh instance, and what to remove after it (a temporary directory, a bank). */
export interface FreshOptions {
  options: unknown;
  cleanup?: () => Promise<void>;
}

/**
 * A target that creates a new instance from a definition for each scenario. `options` is either one
 * options object (enough when each instance owns its state, like the mock's) or a function returning
 * fresh options per instance (a new directory, a reset core). Options are validated against the
 * connector's schema; errors name the field.
 */
export function targetFromDefinition(
  definition: ConnectorDefinition,
  options: unknown | (() => FreshOptions | Promise<FreshOptions>) = {},
  extra: { name?: string; logger?: FastifyBaseLogger; dispose?: () => Promise<void> } = {},
): ConformanceTarget {
  const validate = (raw: unknown) => {
    const { value, problems } = checkOptions(definition, raw);
    if (problems.length) throw new ConformanceOptionsError(definition.id, problems);
    return value;
  };
  const fresh: () => Promise<FreshOptions> =
    typeof options === 'function'
      ? async () => (options as () => FreshOptions | Promise<FreshOptions>)()
      : ((fixed) => async () => ({ options: structuredClone(fixed) }))(validate(options));
  const logger = extra.logger ?? silentLogger();
  // One random key per target: an instance sees what an earlier one of the same target sealed.
  const secrets = ephemeralSecrets('conformance');
  return {
    name: extra.name ?? `${definition.id}@${definition.version}`,
    async create() {
      const f = await fresh();
      try {
        const connector = await definition.create(validate(f.options) as never, { tenantId: 'conformance', logger, secrets });
        return {
          connector,
          cleanup: async () => {
            try {
              await connector.close?.();
            } finally {
              await f.cleanup?.();
            }
          },
        };
      } catch (err) {
        await f.cleanup?.();
        throw err;
      }
    },
    ...(extra.dispose ? { dispose: extra.dispose } : {}),
  };
}
