// Runs scenarios over a target, one fresh connector instance each, and reports pass/fail with reasons.
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { CONTRACT, CONTRACT_OPERATIONS, isContractOperation, offeredBy, type Connector, type ConnectorContext, type ConnectorDefinition, type ConnectorOperations, type ContractOperation } from '../contract.js';
import { checkOptions } from '../loader.js';
import { ephemeralSecrets } from '../shared/ephemeral-secrets.js';
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

/** Thrown by the scenario's view of a connector when the scenario calls an operation it does not offer. */
class NotOffered extends Error {
  constructor(readonly operation: ContractOperation) {
    super(`${operation} is not offered by this connector`);
    this.name = 'NotOffered';
  }
}

/** The connector as a scenario sees it: every operation there, those not offered ending the scenario as such. */
function offeringView(connector: Connector, used: Set<ContractOperation>, missing: Set<ContractOperation>): ConnectorOperations & Connector {
  return new Proxy(connector, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof key === 'string' && isContractOperation(key)) {
        used.add(key);
        if (typeof value !== 'function') {
          // Remembered as well as thrown: a scenario that catches errors (a deadline test) must not turn it into a failure.
          missing.add(key);
          return () => Promise.reject(new NotOffered(key));
        }
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as ConnectorOperations & Connector;
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
  const used = new Set<ContractOperation>();
  const missing = new Set<ContractOperation>();
  const done = (outcome: ScenarioResult['outcome'], reason?: string, notOffered?: ContractOperation): ScenarioResult => ({
    scenario: scenario.name,
    outcome,
    ok: outcome !== 'failed',
    ...(reason === undefined ? {} : { reason }),
    ...(notOffered === undefined ? {} : { notOffered }),
    uses: [...used],
    durationMs: Math.round(performance.now() - started),
  });

  let instance;
  try {
    instance = await withTimeout(target.create(), timeoutMs, `${target.name}: create()`);
  } catch (err) {
    return done('failed', `could not create a connector instance: ${describeError(err)}`);
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
    await withTimeout(scenario.run({ connector: offeringView(instance.connector, used, missing), ctx }), timeoutMs, 'the scenario');
  } catch (err) {
    if (!(err instanceof NotOffered)) reason = describeError(err);
  }
  const notOffered = [...missing][0];
  try {
    await instance.cleanup();
  } catch (err) {
    reason ??= `cleanup failed: ${describeError(err)}`;
  }
  if (notOffered && !reason?.startsWith('cleanup failed')) return done('not-offered', `needs ${notOffered}, which this connector does not offer`, notOffered);
  return done(reason === undefined ? 'passed' : 'failed', reason);
}

/** What an instance of the target offers: one instance, created and cleaned up (for the capability table). */
export async function offeredByTarget(target: ConformanceTarget, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<ContractOperation[]> {
  const instance = await withTimeout(target.create(), timeoutMs, `${target.name}: create()`);
  try {
    return offeredBy(instance.connector);
  } finally {
    await instance.cleanup();
  }
}

/** Runs every scenario (or `opts.scenarios`) in order, then disposes of the target. */
export async function runConformance(target: ConformanceTarget, opts: RunOptions = {}): Promise<Report> {
  const results: ScenarioResult[] = [];
  let offers: ContractOperation[] = [];
  try {
    offers = await offeredByTarget(target, opts.timeoutMs).catch(() => []);
    for (const scenario of opts.scenarios ?? allScenarios) {
      const result = await runScenario(target, scenario, opts);
      results.push(result);
      opts.onResult?.(result);
    }
  } finally {
    await target.dispose?.();
  }
  const count = (outcome: ScenarioResult['outcome']) => results.filter((r) => r.outcome === outcome).length;
  return { target: target.name, passed: count('passed'), failed: count('failed'), notOffered: count('not-offered'), offers, results };
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

/** A target making a new instance per scenario; `options` is an object or a function of fresh ones, validated. */
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
  const secrets = ephemeralSecrets();
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

/** The contract's operations: offered or not, and how the scenarios that used each ended. */
export function capabilityTable(report: Report): string {
  const rows = CONTRACT_OPERATIONS.map((op) => {
    const used = report.results.filter((r) => r.uses.includes(op));
    const passed = used.filter((r) => r.outcome === 'passed').length;
    const failed = used.filter((r) => r.outcome === 'failed').length;
    return [op, CONTRACT[op].group, CONTRACT[op].kind, report.offers.includes(op) ? 'offered' : 'not offered', `${passed} passed${failed ? `, ${failed} failed` : ''}`];
  });
  const head = ['OPERATION', 'GROUP', 'KIND', 'CAPABILITY', 'SCENARIOS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`;
  return fmt(head) + rows.map(fmt).join('');
}
