// Generators both fuzz tests draw from: header values, JSON texts, and a valid body with one thing changed.
import fc from 'fast-check';

/** A printable header value (what an HTTP client lets through). */
export const headerText = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,40}$/);
/** Any JSON document, as text. */
export const jsonText = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null');

/** A valid body with one thing changed: a field dropped, added, or given another type, at the top or one level down. */
export function mutated(valid: unknown): fc.Arbitrary<string> {
  if (valid === null || typeof valid !== 'object' || Array.isArray(valid)) return jsonText;
  const base = valid as Record<string, unknown>;
  const keys = Object.keys(base);
  return fc
    .record({
      kind: fc.constantFrom('drop', 'add', 'retype', 'nested'),
      pick: fc.nat(),
      name: fc.oneof(fc.constantFrom('amount', 'entityId', 'role', '__proto__', 'constructor', 'tenant'), fc.string({ maxLength: 12 })),
      value: fc.jsonValue({ maxDepth: 2 }),
    })
    .map(({ kind, pick, name, value }) => {
      const body: Record<string, unknown> = structuredClone(base);
      const key = keys.length ? keys[pick % keys.length]! : name;
      if (kind === 'drop') delete body[key];
      else if (kind === 'add') body[name] = value;
      else if (kind === 'retype') body[key] = value;
      else {
        const inner = body[key];
        body[key] = inner && typeof inner === 'object' && !Array.isArray(inner) ? { ...inner, [name]: value } : { [name]: value };
      }
      return JSON.stringify(body);
    });
}

/** Content types a client sends: mostly JSON, sometimes another, a malformed one, or anything. */
export const contentTypes = fc.oneof(
  fc.constantFrom(
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'application/problem+json',
    'text/plain',
    'application/jose',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    'json',
  ),
  headerText,
);

/** Mostly what a client sends, sometimes nothing, sometimes something odd. */
export const usually = <T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>, absent = 1) =>
  fc.oneof({ weight: 6, arbitrary: usual }, { weight: 2, arbitrary: odd }, { weight: absent, arbitrary: fc.constant(undefined) });
