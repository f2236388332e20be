// Strict JSON bodies: the one parser for application/json and application/*+json. It refuses what
// JSON.parse quietly accepts: duplicate keys (last one wins), numbers a double cannot hold exactly,
// unbounded nesting and oversized objects or arrays, invalid UTF-8 or Unicode (a lone surrogate escape),
// and prototype-poisoning keys.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CardlineError, Errors } from '../errors.js';
import { declareErrors, errorCase, takesBody } from '../step-errors.js';

/** What reading a body answers on every write: this parser's refusals and Fastify's too-large or media type. */
export const bodyErrors = declareErrors('body', (op) =>
  takesBody(op) ? [errorCase('malformed-body', 'The body is not (strict) JSON', Errors.badRequest('The request body is not valid JSON.'))] : [],
);

/** The body's size and media type, listed after the decrypt step's refusal in the document. */
export const bodyLimitErrors = declareErrors('body', (op) =>
  takesBody(op)
    ? [
        errorCase('too-large', 'The body is larger than the configured limit', Errors.payloadTooLarge(65_536)),
        errorCase('media-type', 'The body is neither JSON nor a JWE', Errors.unsupportedMediaType('text/plain')),
      ]
    : [],
);

export const JSON_LIMITS = {
  /** Containers nested in one another, the top-level object counting as 1. */
  maxDepth: 32,
  /** Keys of one object. */
  maxKeys: 256,
  /** Items of one array. */
  maxItems: 1000,
  /** A double holds every decimal of up to 15 significant digits exactly (DBL_DIG). */
  maxSignificantDigits: 15,
  /** Largest magnitude of a number; a non-zero number must also be at least 1e-15 in magnitude. */
  maxMagnitude: 1e15,
  minMagnitude: 1e-15,
} as const;

/** The media types this parser serves; anything else without a parser of its own answers 415. */
const JSON_MEDIA_TYPE = 'application/json';
const JSON_SUFFIX_MEDIA_TYPE = /^application\/[\w!#$&^.-]+\+json(?:;|$)/;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

interface Frame {
  object: boolean;
  keys: Set<string> | null;
  count: number;
  /** In an object: the next string is a key. */
  expectKey: boolean;
  /** In an object: the key whose value is being read. */
  key: string;
}

const MAX_ECHO = 64;
const echo = (s: string) => (s.length > MAX_ECHO ? `${s.slice(0, MAX_ECHO)}…` : s);

/** Where in the body a frame stack points, as field errors name fields: `a.b[2].c`, or `body`. */
function pathOf(frames: Frame[], depth = frames.length): string {
  let path = '';
  for (let i = 0; i < depth; i++) {
    const f = frames[i]!;
    if (f.object) path += path ? `.${echo(f.key)}` : echo(f.key);
    else path += `[${f.count - 1}]`;
  }
  return path || 'body';
}

const refuse = (detail: string): CardlineError => Errors.badRequest(detail);

const FORBIDDEN_KEY = 'The request body contains a forbidden key (__proto__, or constructor.prototype).';

const LONE_SURROGATE = 'contains an unpaired UTF-16 surrogate (an escape from \\uD800 to \\uDFFF without its pair); send valid Unicode text.';

/** Finds `\u` escapes that decode to a lone surrogate (PostgreSQL refuses them), in one forward pass. */
function surrogateCheck(text: string): (open: number, close: number) => boolean {
  let next = text.indexOf('\\u');
  return (open, close) => {
    if (next >= 0 && next < open) next = text.indexOf('\\u', open);
    if (next < 0 || next > close) return false;
    return !(JSON.parse(text.slice(open, close + 1)) as string).isWellFormed();
  };
}

/** Why a JSON number text is refused, or null. Numbers are never money here (money is a decimal string). */
export function numberProblem(raw: string): 'precision' | 'range' | null {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE][+-]?\d+)?$/.exec(raw);
  if (!m) return 'range';
  let digits = m[1]! + (m[2] ?? '');
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === 48) start++;
  let end = digits.length;
  while (end > start && digits.charCodeAt(end - 1) === 48) end--;
  digits = digits.slice(start, end);
  if (digits.length > JSON_LIMITS.maxSignificantDigits) return 'precision';
  const magnitude = Math.abs(Number(raw));
  if (!Number.isFinite(magnitude) || magnitude > JSON_LIMITS.maxMagnitude) return 'range';
  if (digits.length > 0 && magnitude < JSON_LIMITS.minMagnitude) return 'range';
  return null;
}

/** Index of the quote that closes the string opening at `open` (the text is known to be valid JSON). */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    let backslashes = 0;
    for (let b = q - 1; text.charCodeAt(b) === 92; b--) backslashes++;
    if (backslashes % 2 === 0) return q;
    from = q + 1;
  }
}

/** Checks a text JSON.parse accepted against the limits above, in one pass without recursion. */
function checkJsonText(text: string): void {
  const frames: Frame[] = [];
  const top = () => frames[frames.length - 1];
  /** A value starts: counts an array's items. */
  const valueStarts = () => {
    const f = top();
    if (f && !f.object && ++f.count > JSON_LIMITS.maxItems) {
      throw refuse(`The array at ${pathOf(frames, frames.length - 1)} has more than ${JSON_LIMITS.maxItems} items.`);
    }
  };
  const open = (object: boolean) => {
    valueStarts();
    if (frames.length >= JSON_LIMITS.maxDepth) {
      throw refuse(`The request body nests objects and arrays deeper than ${JSON_LIMITS.maxDepth} levels (at ${pathOf(frames)}).`);
    }
    frames.push({ object, keys: object ? new Set() : null, count: 0, expectKey: object, key: '' });
  };

  const loneSurrogate = surrogateCheck(text);
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    switch (c) {
      case 0x7b: // {
        open(true);
        break;
      case 0x5b: // [
        open(false);
        break;
      case 0x7d: // }
      case 0x5d: // ]
        frames.pop();
        break;
      case 0x2c: {
        // ,
        const f = top();
        if (f?.object) f.expectKey = true;
        break;
      }
      case 0x22: {
        // "
        const end = stringEnd(text, i);
        const f = top();
        if (f?.object && f.expectKey) {
          // Checked before the key is named in any answer (or in a path).
          if (loneSurrogate(i, end)) throw refuse(`A key of the object at ${pathOf(frames, frames.length - 1)} ${LONE_SURROGATE}`);
          const raw = text.slice(i, end + 1);
          const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
          if (f.keys!.has(key)) {
            const where = frames.length > 1 ? ` of the object at ${pathOf(frames, frames.length - 1)}` : '';
            throw refuse(`The request body repeats the key "${echo(key)}"${where}; send each key once.`);
          }
          // Prototype poisoning: `__proto__` anywhere, or `prototype` inside a `constructor` object.
          if (key === '__proto__' || (key === 'prototype' && frames.length > 1 && frames[frames.length - 2]!.object && frames[frames.length - 2]!.key === 'constructor')) {
            throw refuse(FORBIDDEN_KEY);
          }
          f.keys!.add(key);
          if (++f.count > JSON_LIMITS.maxKeys) {
            throw refuse(`The object at ${pathOf(frames, frames.length - 1)} has more than ${JSON_LIMITS.maxKeys} keys.`);
          }
          f.key = key;
          f.expectKey = false;
        } else {
          valueStarts();
          if (loneSurrogate(i, end)) throw refuse(`The string at ${pathOf(frames)} ${LONE_SURROGATE}`);
        }
        i = end;
        break;
      }
      case 0x74: // true
      case 0x6e: // null
        valueStarts();
        i += 3;
        break;
      case 0x66: // false
        valueStarts();
        i += 4;
        break;
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          valueStarts();
          let j = i + 1;
          while (j < n) {
            const d = text.charCodeAt(j);
            // digits . + - e E
            if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x2b || d === 0x2d || d === 0x65 || d === 0x45) j++;
            else break;
          }
          const problem = numberProblem(text.slice(i, j));
          if (problem) {
            const where = pathOf(frames);
            throw refuse(
              problem === 'precision'
                ? `The number at ${where} has more than ${JSON_LIMITS.maxSignificantDigits} significant digits; send it as a string.`
                : `The number at ${where} is outside the accepted range (magnitude at most 1e15); send it as a string.`,
            );
          }
          i = j - 1;
        }
      // whitespace and ':' need nothing
    }
  }
}

const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

/** Parses a JSON text strictly; every refusal is a 400 CardlineError with a detail the caller can act on. */
export function parseStrictJson(input: string): unknown {
  // A leading byte-order mark is ignored, as Fastify's own parser does.
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  if (text.length === 0) throw refuse('The request body is empty; send a JSON object.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse('The request body is not valid JSON.');
  }
  // One pass over the text for every other rule, prototype-poisoning keys included.
  checkJsonText(text);
  // U+0000 cannot be stored in PostgreSQL text: refused here (an escape counts after an even backslash run).
  if (text.includes('\\u0000') && NUL_ESCAPE.test(text)) throw refuse('The request body contains a NUL character (\\u0000), which is not accepted.');
  return value;
}

/** Decodes a body as UTF-8, refusing invalid sequences instead of replacing them. */
export function decodeUtf8(body: Buffer): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw refuse('The request body is not valid UTF-8.');
  }
}

const charsetOk = (contentType: string): boolean => {
  const m = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType);
  return !m || /^utf-?8$/i.test(m[1]!);
};

async function parseBody(request: FastifyRequest, body: Buffer): Promise<unknown> {
  const contentType = String(request.headers['content-type'] ?? '');
  if (!charsetOk(contentType)) throw Errors.unsupportedMediaType(contentType);
  return parseStrictJson(decodeUtf8(body));
}

const strictJsonPlugin: FastifyPluginAsync = async (app) => {
  app.removeContentTypeParser(JSON_MEDIA_TYPE);
  app.addContentTypeParser<Buffer>(JSON_MEDIA_TYPE, { parseAs: 'buffer' }, parseBody);
  app.addContentTypeParser<Buffer>(JSON_SUFFIX_MEDIA_TYPE, { parseAs: 'buffer' }, parseBody);
  // A NUL in the path or query (%00) would reach the store the same way.
  app.addHook('onRequest', (request, _reply, done) => {
    done(/%00/i.test(request.url) ? refuse('The URL contains a NUL character (%00), which is not accepted.') : undefined);
  });
  // `application/jose` bodies are decrypted, then parsed here, so the same limits apply (DESIGN §4).
};

export default fp(strictJsonPlugin, { name: 'strict-json', dependencies: ['errors'] });
