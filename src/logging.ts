// Logger options: pino JSON with secrets redacted by path and, as a safety net, by shape.
import type { LoggerOptions } from 'pino';

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.id_token',
  '*.token',
  '*.pan',
  '*.cvv',
  '*.pinBlock',
  '*.privateKey',
  '*.masterKey',
];

const JWT_OR_JWE = /eyJ[\w-]*\.[\w.-]+/g;
// A run of 13-19 digits (optionally spaced or dashed) is treated as a card number and masked.
const PAN_LIKE = /\b(\d{6})[\d -]{3,9}(\d{4})\b/g;

/** Masks token/JWE strings and card-number-shaped digit runs anywhere in a logged string. */
export function scrub(value: string): string {
  return value.replace(JWT_OR_JWE, '[REDACTED-JOSE]').replace(PAN_LIKE, (m, first: string, last: string) => {
    const digits = m.replace(/\D/g, '');
    return digits.length >= 13 && digits.length <= 19 ? `${first}******${last}` : m;
  });
}

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, depth + 1);
  return out;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    formatters: {
      log: (obj) => scrubDeep(obj) as Record<string, unknown>,
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
