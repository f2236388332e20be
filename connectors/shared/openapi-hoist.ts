// Named schemas for an OpenAPI document: every occurrence of a named schema, however deep, becomes
// `{ $ref: '#/components/schemas/<name>' }`, so that generated clients get named types instead of anonymous
// ones. The names are given in one place (src/openapi/components.ts, coreProtocolComponents in schemas/core-protocol.ts); the routes
// keep their own TypeBox schemas, used at run time as they are.

/** Keywords whose values are data, not schemas: never hoisted, never searched. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/** JSON with sorted keys: two schemas written in another key order are the same schema. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** TypeBox marks schemas with symbol keys; JSON keeps only the standard keywords. */
const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema)) as unknown;

export interface Hoister {
  /** The schema with every named subschema (itself included) replaced by its `$ref`. */
  hoist(schema: unknown): unknown;
  /** The schema of `name`, its parts that have names of their own as $refs. */
  bodyOf(name: string): unknown;
  /** The named schemas that `document` refers to, directly or through another, by name. */
  components(document: unknown): Record<string, unknown>;
}

/** A hoister over `named`; two names for one schema are refused (a client would get two types). */
export function hoister(named: Record<string, unknown>, prefix = '#/components/schemas/'): Hoister {
  const byKey = new Map<string, string>();
  const bodies = new Map<string, unknown>();

  const walk = (node: unknown, self?: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) out[k] = DATA_KEYWORDS.has(k) ? v : walk(v);
    const name = byKey.get(canonical(out));
    if (name === undefined || name === self) return out;
    return { $ref: `${prefix}${name}` };
  };

  // Smallest first: a schema's parts are named before the schema that holds them, so its body refers to them.
  const ordered = Object.entries(named)
    .map(([name, schema]) => [name, plain(schema)] as const)
    .sort((a, b) => JSON.stringify(a[1]).length - JSON.stringify(b[1]).length);
  for (const [name, schema] of ordered) {
    const body = walk(schema, name);
    const key = canonical(body);
    const other = byKey.get(key);
    if (other !== undefined) throw new Error(`The schemas named ${other} and ${name} are the same schema: give it one name`);
    byKey.set(key, name);
    bodies.set(name, body);
  }

  return {
    hoist: (schema) => walk(schema),
    bodyOf(name) {
      if (!bodies.has(name)) throw new Error(`No schema is named ${name}`);
      return bodies.get(name);
    },
    components(document) {
      // What the hoisted schemas use, and what those use in turn.
      const refsOf = (node: unknown, found: Set<string>) => {
        if (Array.isArray(node)) node.forEach((n) => refsOf(n, found));
        else if (node !== null && typeof node === 'object') {
          for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
            if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) found.add(v.slice(prefix.length));
            else if (!DATA_KEYWORDS.has(k)) refsOf(v, found);
          }
        }
      };
      const used = new Set<string>();
      refsOf(document, used);
      const all = new Set(used);
      const queue = [...used];
      while (queue.length) {
        const found = new Set<string>();
        refsOf(bodies.get(queue.pop()!), found);
        for (const name of found) {
          if (all.has(name)) continue;
          all.add(name);
          queue.push(name);
        }
      }
      const unknown = [...all].filter((name) => !bodies.has(name));
      if (unknown.length) throw new Error(`The document refers to schemas that have no name: ${unknown.join(', ')}`);
      return Object.fromEntries([...all].sort().map((name) => [name, bodies.get(name)]));
    },
  };
}
