// Logger options: pino JSON with secrets masked by key at any depth and, as a safety net, by shape. One walk
// of the logged object does both (decision 0207): pino's redaction by path, with its wildcards, cost about
// 7 µs of CPU a line, more than pino's own writing of it.
import type { Bindings, ChildLoggerOptions, Logger, LoggerOptions } from 'pino';
import { maskCardNumbers } from '../connectors/shared/pan.js';
import { REQUEST_TRACE, traceLogFields, tracing } from './telemetry/index.js';

const JWT_OR_JWE = /eyJ[\w-]*\.[\w.-]+/g;
/**
 * Keys whose values are masked at any depth, whatever their shape: credentials (a request's authorization
 * and cookie headers, tokens, private and master keys), the fields schemas mark sensitive (address lines,
 * decision 0019) and the response fields that only leave encrypted. Also a safety net for a body or a
 * connector input logged by mistake.
 */
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

/**
 * Whether a string may hold what scrub() masks: a JOSE compact serialisation starts `eyJ`, and a run of 13 to
 * 19 digits (single spaces or dashes allowed between them) holds either four digits in a row or a digit, a
 * separator and a digit. Most logged strings (methods, route patterns, tenant ids) hold neither.
 */
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
  // An Error's message, stack and cause are not enumerable: copy them (scrubbed), or every logged error
  // would be `{}`. The prototype is kept so that pino's err serializer still names the error's type.
  const isError = value instanceof Error;
  const out = (isError ? Object.create(Object.getPrototypeOf(value) as object) : {}) as Record<string, unknown>;
  if (isError) {
    out.message = scrub(value.message);
    if (value.stack) out.stack = scrub(value.stack);
    if (value.cause !== undefined) out.cause = scrubDeep(value.cause, depth + 1);
  }
  for (const [k, v] of Object.entries(value)) out[k] = SENSITIVE_LOG_KEYS.has(k) && v != null ? '[REDACTED]' : scrubDeep(v, depth + 1);
  return out;
}

/**
 * The request id, bound to every line of a request: left as it is, because genReqId (src/app.ts) only lets
 * through a caller's id that holds no card number or token, and a generated UUID's digits can look like a
 * card number across its dashes (masking it would break tracing).
 */
const REQUEST_ID_KEY = 'requestId';

/** A log object or a logger's bindings, scrubbed, its request id untouched. */
function scrubEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const { [REQUEST_ID_KEY]: requestId, ...rest } = entry;
  const scrubbed = scrubDeep(rest) as Record<string, unknown>;
  return requestId === undefined ? scrubbed : { [REQUEST_ID_KEY]: requestId, ...scrubbed };
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
        const scrubbed = args.map((a) => (typeof a === 'string' ? scrub(a) : a)) as typeof args;
        return method.apply(this, scrubbed);
      },
    },
  };
}

/**
 * pino serialises a child logger's bindings once, when the child is made, without the `log` formatter, and
 * resets `formatters.bindings` for children: a card number bound to a child (a request's logger, a
 * connector's) would reach every line unscrubbed. This makes every child of `logger`, at any depth, scrub its
 * bindings first (children are made with Object.create, so they inherit this `child`). Idempotent.
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

/**
 * A request's logger, made when first used: most requests log one completion line, which the gateway writes
 * on the root logger with the request id as a field, so building a pino child (its bindings serialised)
 * for every request would be work thrown away. Anything that logs through request.log gets the real child.
 */
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

  fatal: LogFn = (...args: Parameters<LogFn>) => this.real.fatal(...args);
  error: LogFn = (...args: Parameters<LogFn>) => this.real.error(...args);
  warn: LogFn = (...args: Parameters<LogFn>) => this.real.warn(...args);
  info: LogFn = (...args: Parameters<LogFn>) => this.real.info(...args);
  debug: LogFn = (...args: Parameters<LogFn>) => this.real.debug(...args);
  trace: LogFn = (...args: Parameters<LogFn>) => this.real.trace(...args);
  silent: LogFn = () => undefined;

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
