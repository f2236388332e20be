// Secrets in tenant configuration (decision 0035): connector options a connector's schema marks
// `sensitive()` (REST bearer tokens, basic passwords) are sealed under the master key in the store, opened
// only in memory for the connector, and shown as "***" by every list and read.
import type { TSchema } from '@sinclair/typebox';
import { isSensitive } from '../../schemas/common.js';
import type { MasterKey } from './master-key.js';

/** How a sealed value is stored in place of the plain one. */
const SEALED = '$sealed';
/** What lists and reads show for a secret; sent back in a PATCH, it keeps the stored secret. */
const REDACTED = '***';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSealed = (v: unknown): v is { [SEALED]: string } => isObject(v) && typeof v[SEALED] === 'string' && Object.keys(v).length === 1;

/** The schemas a member of `value` may match: through unions, composites and optional wrappers. */
function memberSchemas(schema: TSchema | undefined, key: string): TSchema[] {
  if (!schema) return [];
  const s = schema as { properties?: Record<string, TSchema>; anyOf?: TSchema[]; oneOf?: TSchema[]; allOf?: TSchema[]; additionalProperties?: unknown };
  const own = s.properties?.[key] ? [s.properties[key]] : [];
  const branches = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap((b) => memberSchemas(b, key));
  return [...own, ...branches];
}

/** Sensitive string leaves of `value` per `schema`, as dotted paths. */
function walk(value: unknown, schema: TSchema | undefined, path: string, visit: (path: string, holder: Json, key: string) => void): void {
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    const schemas = memberSchemas(schema, key);
    const here = path ? `${path}.${key}` : key;
    if (typeof value[key] === 'string' && schemas.some(isSensitive)) visit(here, value, key);
    else if (isObject(value[key])) for (const sub of schemas.length ? schemas : [undefined]) walk(value[key], sub, here, visit);
  }
}

export class ConfigSecrets {
  constructor(private readonly masterKey: MasterKey) {}

  /** A copy of a connector's options with each sensitive string sealed (bound to the tenant and path). */
  seal(tenantId: string, options: unknown, schema: TSchema): unknown {
    const copy = structuredClone(options);
    walk(copy, schema, '', (path, holder, key) => {
      holder[key] = { [SEALED]: this.masterKey.seal(holder[key] as string, aad(tenantId, path)) };
    });
    return copy;
  }

  /** A copy with every sealed value opened: what the connector is built from. */
  open(tenantId: string, options: unknown): unknown {
    return mapSealed(options, '', (blob, path) => this.masterKey.open(blob, aad(tenantId, path)));
  }
}

const aad = (tenantId: string, path: string) => `cardline-secret:${tenantId}:${path}`;

function mapSealed(value: unknown, path: string, fn: (blob: string, path: string) => unknown): unknown {
  if (isSealed(value)) return fn(value[SEALED], path);
  if (Array.isArray(value)) return value.map((v, i) => mapSealed(v, `${path}[${i}]`, fn));
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSealed(v, path ? `${path}.${k}` : k, fn)]));
}

/** A copy with every sealed value shown as "***": what lists, reads and logs may print. */
export const redactSecrets = <T extends Record<string, unknown>>(value: T): T => mapSealed(value, '', () => REDACTED) as T;

/** Whether a stored configuration still holds a plain value where the schema says secret (legacy rows). */
export function hasPlainSecrets(options: unknown, schema: TSchema): boolean {
  let found = false;
  walk(options, schema, '', () => (found = true));
  return found;
}

/** A merge patch without its "***" leaves where a value is sealed: sending back what was read keeps the secret. */
export function keepSealed(patch: unknown, stored: unknown): unknown {
  if (!isObject(patch) || !isObject(stored)) return patch;
  const out: Json = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === REDACTED && isSealed(stored[k])) continue;
    out[k] = isObject(v) ? keepSealed(v, stored[k]) : v;
  }
  return out;
}
