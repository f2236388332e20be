// Logger options: pino JSON with secrets masked by key at any depth and by shape, in one walk (decision 0207).
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { maskCardNumbers } from '../connectors/shared/pan.js';
import { REQUEST_TRACE, traceLogFields, tracing } from './telemetry/index.js';

const JWT_OR_JWE = /eyJ[\w-]*\.[\w.-]+/g;
/** Keys masked at any depth whatever their shape: credentials, sensitive fields and encrypted-only response fields. */
const SENSITIVE_LOG_KEYS = new Set([
  'authorization',
  'cookie',
  'token',
  'id_token',
  'privateKey',
  'masterKey',
  'address1',
  'address2',
  'email',
  'mobile',
  'pan',
  'cvv',
  'expiry',
  'pinBlock',
  'password',
]);

/** Whether a string may hold what scrub() masks (a JOSE `eyJ…` or a 13-19 digit run); most logged strings cannot. */
const MAYBE_SECRET = /eyJ|\d{4}|\d[ -]\d/;

/** Masks token/JWE strings and card-number-shaped digit runs anywhere in a logged string. */
export function scrub(value: string): string {
  if (!MAYBE_SECRET.test(value)) return value;
  // Every 13-19 digit run is masked in logs, Luhn-valid or not: a log line has no ids worth the risk.
  return maskCardNumbers(value.replace(JWT_OR_JWE, '[REDACTED-JOSE]'), { luhnOnly: false });
}

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  // An Error's message, stack and cause are not enumerable: copied (scrubbed), the prototype kept for pino.
  const isError = value instanceof Error;
  const out = (isError ? Object.create(Object.getPrototypeOf(value) as object) : {}) as Record<string, unknown>;
  if (isError) {
    out.message = scrub(value.message);
    if (value.stack) out.stack = scrub(value.stack);
    if (value.cause !== undefined) out.cause = scrubDeep(value.cause, depth + 1);
  }
  for (const [k, v] of Object.entries(value)) out[k] = scrubField(k, v, depth + 1);
  return out;
}

/** A field's value at `depth`: redacted whole under a sensitive key, else scrubbed. */
const scrubField = (key: string, value: unknown, depth: number): unknown =>
  SENSITIVE_LOG_KEYS.has(key) && value != null ? '[REDACTED]' : scrubDeep(value, depth);

/** The request id, left as it is: genReqId admits no card number or token, and masking a UUID breaks tracing. */
const REQUEST_ID_KEY = 'requestId';

/** W3C trace and span ids are kept whole: a random id's digits can run 13+ in a row, and masked it finds no trace. */
const TRACE_IDS = { trace_id: /^[0-9a-f]{32}$/, span_id: /^[0-9a-f]{16}$/ } as const;

/** A log object or a logger's bindings, scrubbed, its request id and trace ids untouched. */
function scrubEntry(entry: Record<string, unknown>): Record<string, unknown> {
  // One object built in one pass (a line per request): the kept ids first, then the rest in their order.
  const out: Record<string, unknown> = {};
  const requestId = entry[REQUEST_ID_KEY];
  if (requestId !== undefined) out[REQUEST_ID_KEY] = requestId;
  for (const key of ['trace_id', 'span_id'] as const) {
    const value = entry[key];
    if (value !== undefined) out[key] = typeof value === 'string' && TRACE_IDS[key].test(value) ? value : scrubDeep(value);
  }
  for (const key of Object.keys(entry)) {
    if (key === REQUEST_ID_KEY || key === 'trace_id' || key === 'span_id') continue;
    out[key] = scrubField(key, entry[key], 1);
  }
  return out;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    // While tracing is on, a line names the span it was logged in (trace_id, span_id); nothing otherwise.
    ...(tracing() ? { mixin: traceLogFields } : {}),
    formatters: {
      log: scrubEntry,
      // The root logger's own bindings (pid, hostname); a child's are scrubbed by scrubBindings() below.
      bindings: scrubEntry,
    },
    hooks: {
      logMethod(args, method) {
        // The message string is scrubbed too: a card number interpolated into it must not survive.
        for (let i = 0; i < args.length; i++) {
          const a: unknown = args[i];
          if (typeof a === 'string') (args as unknown[])[i] = scrub(a);
        }
        return method.apply(this, args);
      },
    },
  };
}

/**
 * pino serialises a child's bindings once, without the `log` formatter, so a card number bound to a child
 * would reach every line unscrubbed: every child of `logger`, at any depth, scrubs its bindings first.
 */
export function scrubBindings<L extends Logger>(logger: L): L {
  type Child = (this: unknown, bindings: Bindings, options?: ChildLoggerOptions) => unknown;
  const child = logger.child as unknown as Child;
  Object.defineProperty(logger, 'child', {
    configurable: true,
    writable: true,
    value: function (this: unknown, bindings: Bindings, options?: ChildLoggerOptions) {
      return child.call(this, scrubEntry(bindings), options);
    },
  });
  return logger;
}

type LogFn = Logger['info'];

/** A request's logger, made only when used: most requests log just their completion line on the root logger. */
class LazyChildLogger {
  #real: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly childBindings: Bindings,
    private readonly options: ChildLoggerOptions,
    private readonly rawRequest?: object,
  ) {}

  private get real(): Logger {
    if (this.#real) return this.#real;
    const real = this.parent.child(this.childBindings, this.options);
    // The request's trace, for the lines it logs outside any span (src/telemetry/index.ts traceLogFields).
    if (this.rawRequest) Object.defineProperty(real, REQUEST_TRACE, { value: this.rawRequest });
    return (this.#real = real);
  }

  get level(): string {
    return this.#real?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  // Methods on the prototype, not per-instance closures: a request's logger is made for every request.
  fatal(...args: Parameters<LogFn>): void {
    this.real.fatal(...args);
  }
  error(...args: Parameters<LogFn>): void {
    this.real.error(...args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.real.warn(...args);
  }
  info(...args: Parameters<LogFn>): void {
    this.real.info(...args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.real.debug(...args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.real.trace(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  isLevelEnabled(level: string): boolean {
    return this.real.isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.real.bindings();
  }
}

/** Fastify's childLoggerFactory: a request's logger made only when something logs through it. */
export function lazyChildLogger(logger: unknown, bindings: Bindings, options: ChildLoggerOptions, rawRequest?: object): Logger {
  return new LazyChildLogger(logger as Logger, bindings, options, tracing() ? rawRequest : undefined) as unknown as Logger;
}

/** The gateway's JSON lines: written 4 kB or 100 ms at a time, not a write per line, and flushed at exit (decision 0388). */
export function logDestination(dest: string | number = 1): DestinationStream {
  return pino.destination({ dest, sync: false, minLength: 4096, periodicFlush: 100 });
}

/** The demo on a terminal: pino-pretty lines, fed what the formatters above already masked. */
export async function prettyLogStream(destination: NodeJS.WritableStream = process.stdout): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({ colorize: destination === process.stdout, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true, destination });
}

/** Pretty lines only for the demo on a terminal; JSON otherwise (a pipe, a file, a container's log, production). */
export const wantsPrettyLogs = (demo: boolean, isTTY: boolean | undefined): boolean => demo && isTTY === true;
