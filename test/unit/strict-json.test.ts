// The strict JSON parser on its own: exact refusals, and property tests that compare its verdict with
// the ground truth of generated documents (duplicates, depth, sizes, numbers) and that it never crashes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CardlineError } from '../../src/errors.js';
import { JSON_LIMITS, decodeUtf8, numberProblem, parseStrictJson } from '../../src/plugins/strict-json.js';

const SEED = 20_240_611;

/** The detail of the 400 a text is refused with, or 'ok' with the parsed value. */
function verdict(text: string): { ok: unknown } | { refused: string } {
  try {
    return { ok: parseStrictJson(text) };
  } catch (err) {
    if (!(err instanceof CardlineError)) throw err;
    expect(err.init.status).toBe(400);
    return { refused: err.init.detail! };
  }
}

const LONE = 'contains an unpaired UTF-16 surrogate (an escape from \\uD800 to \\uDFFF without its pair); send valid Unicode text.';

describe('parseStrictJson: refusals', () => {
  it.each([
    ['', 'The request body is empty; send a JSON object.'],
    ['{"a":1', 'The request body is not valid JSON.'],
    ["{'a':1}", 'The request body is not valid JSON.'],
    ['{"a":1,}', 'The request body is not valid JSON.'],
    ['NaN', 'The request body is not valid JSON.'],
    ['{"a":1,"a":2}', 'The request body repeats the key "a"; send each key once.'],
    ['{"a":1,"\\u0061":2}', 'The request body repeats the key "a"; send each key once.'],
    ['{"x":{"b":[{"c":1,"c":1}]}}', 'The request body repeats the key "c" of the object at x.b[0]; send each key once.'],
    ['{"__proto__":{"admin":true}}', 'The request body contains a forbidden key (__proto__, or constructor.prototype).'],
    ['{"constructor":{"prototype":{"admin":true}}}', 'The request body contains a forbidden key (__proto__, or constructor.prototype).'],
    ['{"pan":4111111111111111}', 'The number at pan has more than 15 significant digits; send it as a string.'],
    ['{"a":[1,2,0.1234567890123456]}', 'The number at a[2] has more than 15 significant digits; send it as a string.'],
    ['{"a":1e16}', 'The number at a is outside the accepted range (magnitude at most 1e15); send it as a string.'],
    ['{"a":-1000000000000001}', 'The number at a has more than 15 significant digits; send it as a string.'],
    ['{"a":1e400}', 'The number at a is outside the accepted range (magnitude at most 1e15); send it as a string.'],
    ['{"a":1e-400}', 'The number at a is outside the accepted range (magnitude at most 1e15); send it as a string.'],
    ['12345678901234567', 'The number at body has more than 15 significant digits; send it as a string.'],
    ['"\\ud800"', `The string at body ${LONE}`],
    ['{"a":["ok","\\udc00\\ud800"]}', `The string at a[1] ${LONE}`],
    ['{"a":"\\ud83d\\u0041"}', `The string at a ${LONE}`],
    ['{"x":{"\\ud800":1}}', `A key of the object at x ${LONE}`],
  ])('%s → %s', (text, detail) => {
    expect(verdict(text)).toEqual({ refused: detail });
  });

  it('a surrogate pair (escaped or raw) and an escaped backslash before "u" are accepted', () => {
    expect(verdict('{"a":"\\ud83d\\ude00","b":"😀","c":"\\\\ud800"}')).toEqual({ ok: { a: '😀', b: '😀', c: '\\ud800' } });
  });

  it('the nesting limit: 32 levels are accepted, 33 refused', () => {
    const nest = (n: number) => '{"a":'.repeat(n - 1) + '[]' + '}'.repeat(n - 1);
    expect(verdict(nest(JSON_LIMITS.maxDepth))).toEqual({ ok: JSON.parse(nest(32)) });
    expect(verdict(nest(33))).toEqual({
      refused: `The request body nests objects and arrays deeper than 32 levels (at ${Array(32).fill('a').join('.')}).`,
    });
    // A nesting bomb far beyond the limit is refused the same way, without a stack overflow.
    expect(verdict('['.repeat(20_000) + ']'.repeat(20_000))).toEqual({
      refused: `The request body nests objects and arrays deeper than 32 levels (at ${'[0]'.repeat(32)}).`,
    });
  });

  it('the key limit: 256 keys are accepted, 257 refused', () => {
    const obj = (n: number) => JSON.stringify({ nested: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])) });
    expect(verdict(obj(256))).toHaveProperty('ok');
    expect(verdict(obj(257))).toEqual({ refused: 'The object at nested has more than 256 keys.' });
  });

  it('the item limit: 1000 items are accepted, 1001 refused', () => {
    expect(verdict(JSON.stringify({ list: Array(1000).fill(0) }))).toHaveProperty('ok');
    expect(verdict(JSON.stringify({ list: Array(1001).fill(0) }))).toEqual({ refused: 'The array at list has more than 1000 items.' });
    expect(verdict(JSON.stringify(Array(1001).fill(null)))).toEqual({ refused: 'The array at body has more than 1000 items.' });
  });

  it('accepts what is fine: equal keys in different objects, escaped quotes in strings, the bounds themselves', () => {
    const text = '{"a":{"k":1},"b":{"k":"x\\"k\\":2"},"n":[1e15,-1e15,999999999999999,0.000000000000001,0,-0,0e99999,1.50000000000000000000]}';
    expect(verdict(text)).toEqual({ ok: JSON.parse(text) });
  });

  it('a long key or path is cut short in the answer', () => {
    const key = 'k'.repeat(500);
    expect(verdict(`{"${key}":1,"${key}":2}`)).toEqual({ refused: `The request body repeats the key "${'k'.repeat(64)}…"; send each key once.` });
  });
});

describe('decodeUtf8', () => {
  it('refuses invalid UTF-8 instead of replacing it; a leading BOM is ignored (as Fastify did)', () => {
    expect(() => decodeUtf8(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toThrow('The request body is not valid UTF-8.');
    expect(() => decodeUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toThrow('The request body is not valid UTF-8.');
    expect(decodeUtf8(Buffer.from('{"a":"é"}'))).toBe('{"a":"é"}');
    expect(verdict(decodeUtf8(Buffer.from('\uFEFF{"a":1}')))).toEqual({ ok: { a: 1 } });
  });
});

// ---------------------------------------------------------------------------------------------------
// Property tests. Documents are generated as trees whose objects are lists of entries (so keys may
// repeat), serialised with random whitespace and random escaping of keys; the ground truth is computed
// from the tree, independently of the parser.

type Node =
  | { t: 'obj'; entries: [string, Node][] }
  | { t: 'arr'; items: Node[] }
  | { t: 'num'; text: string; sig: number }
  | { t: 'lit'; text: string };

const ws = fc.constantFrom('', '', '', ' ', '\n', '\t', ' \r\n ');

/** Keys from a small alphabet, so that duplicates are frequent. */
const keyArb = fc.constantFrom('a', 'b', 'id', 'é', 'a"b', 'a\\b', '\u0000', '');

/** A number text built from parts whose significant digit count is known. */
const numArb = fc
  .record({
    neg: fc.boolean(),
    core: fc.stringMatching(/^[1-9](\d{0,18}[1-9])?$/),
    leadingZeros: fc.integer({ min: 0, max: 3 }),
    trailingZeros: fc.integer({ min: 0, max: 3 }),
    point: fc.integer({ min: 0, max: 25 }),
    exp: fc.option(fc.integer({ min: -30, max: 30 }), { nil: undefined }),
  })
  .map(({ neg, core, leadingZeros, trailingZeros, point, exp }) => {
    const digits = '0'.repeat(leadingZeros) + core + '0'.repeat(trailingZeros);
    // Integer part: at least one digit, no leading zero unless it is the only digit.
    const cut = Math.min(Math.max(point, 1), digits.length);
    let int = digits.slice(0, cut).replace(/^0+(?=\d)/, '');
    const frac = digits.slice(cut);
    if (int === '') int = '0';
    const text = `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}${exp === undefined ? '' : `e${exp}`}`;
    return { t: 'num' as const, text, sig: core.length };
  });

const litArb = fc.constantFrom('true', 'false', 'null', '"s"', '"x\\"y"', '"{\\"a\\":1,\\"a\\":2}"', '0').map((text) => ({ t: 'lit' as const, text }));

const { node: nodeArb } = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    litArb,
    numArb,
    fc.array(fc.tuple(keyArb, tie('node')), { maxLength: 4 }).map((entries) => ({ t: 'obj' as const, entries })),
    fc.array(tie('node'), { maxLength: 4 }).map((items) => ({ t: 'arr' as const, items })),
  ),
}));

/** Escapes a key, sometimes with \u sequences for plain characters (the parser must see through them). */
function serialiseKey(key: string, escapeAll: boolean): string {
  if (!escapeAll) return JSON.stringify(key);
  return `"${[...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
}

function serialise(node: Node, pick: () => string, escapeKeys: () => boolean): string {
  switch (node.t) {
    case 'lit':
    case 'num':
      return node.text;
    case 'arr':
      return `[${pick()}${node.items.map((n) => serialise(n, pick, escapeKeys)).join(`${pick()},${pick()}`)}${pick()}]`;
    case 'obj':
      return `{${pick()}${node.entries
        .map(([k, v]) => `${serialiseKey(k, escapeKeys())}${pick()}:${pick()}${serialise(v, pick, escapeKeys)}`)
        .join(`${pick()},${pick()}`)}${pick()}}`;
  }
}

/** Whether the tree breaks a rule, computed from the tree itself. */
function breaksARule(node: Node, depth = 0): boolean {
  switch (node.t) {
    case 'lit':
      return false;
    case 'num': {
      if (node.sig > JSON_LIMITS.maxSignificantDigits) return true;
      const v = Math.abs(Number(node.text));
      return !Number.isFinite(v) || v > JSON_LIMITS.maxMagnitude || v < JSON_LIMITS.minMagnitude;
    }
    case 'arr':
      return depth + 1 > JSON_LIMITS.maxDepth || node.items.length > JSON_LIMITS.maxItems || node.items.some((n) => breaksARule(n, depth + 1));
    case 'obj': {
      const keys = node.entries.map(([k]) => k);
      return (
        depth + 1 > JSON_LIMITS.maxDepth ||
        new Set(keys).size !== keys.length ||
        keys.some((k) => k.includes('\u0000')) ||
        keys.length > JSON_LIMITS.maxKeys ||
        node.entries.some(([, v]) => breaksARule(v, depth + 1))
      );
    }
  }
}

describe('parseStrictJson: properties', () => {
  it('numberProblem agrees with the significant digits a number was built with', () => {
    fc.assert(
      fc.property(numArb, (n) => {
        const problem = numberProblem(n.text);
        if (n.sig > 15) expect(problem).toBe('precision');
        else {
          const v = Math.abs(Number(n.text));
          expect(problem).toBe(v > 1e15 || v < 1e-15 ? 'range' : null);
        }
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('accepts a document exactly when it breaks no rule, and then returns what JSON.parse returns', () => {
    fc.assert(
      fc.property(nodeArb, fc.infiniteStream(ws), fc.infiniteStream(fc.boolean()), (tree, spaces, escapes) => {
        const text = serialise(tree, () => spaces.next().value, () => escapes.next().value);
        const v = verdict(text);
        if (breaksARule(tree)) {
          expect(v).toHaveProperty('refused');
        } else {
          expect(v).toEqual({ ok: JSON.parse(text) });
        }
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });

  it('never throws anything but a 400 on arbitrary or mutated text', () => {
    const mutated = fc
      .tuple(fc.json(), fc.nat(), fc.string({ maxLength: 3 }))
      .map(([json, at, insert]) => json.slice(0, at % (json.length + 1)) + insert + json.slice(at % (json.length + 1)));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), mutated, fc.json()), (text) => {
        const v = verdict(text);
        if ('ok' in v) expect(v.ok).toEqual(JSON.parse(text));
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });
});
