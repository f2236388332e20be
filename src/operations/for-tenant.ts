// A tenant Admin's entry served to an operator on the management listener: one declaration, two listeners.
import { Type, type TObject } from '@sinclair/typebox';
import { TenantIdParams } from '../../schemas/management.js';
import { Errors } from '../errors.js';
import type { Operation, TypedOperation } from './define.js';

/** How the derived entry is placed and worded in the management document where an operator reads it differently. */
export type TenantPlace = Pick<Operation, 'tag'> & Partial<Pick<Operation, 'url' | 'summary' | 'description' | 'examples' | 'objectName' | 'errors'>>;

const tenantNotFound = Errors.tenantNotFound('acme');

/**
 * The Admin entry `sourceId` served to operators as `id` under `/v1/tenants/:tenantId/…`: the same schemas,
 * checks, execute, view and event, audited in that tenant's trail.
 */
export function forTenant<Id extends string, Source extends Operation, SourceId extends Source['id']>(
  sourceId: SourceId,
  id: Id,
  from: readonly Source[],
  place: TenantPlace,
): TypedOperation<Id, Extract<Source, { id: SourceId }>['method']> {
  const op = from.find((o) => o.id === sourceId);
  if (!op) throw new Error(`No operation '${sourceId}' to serve on the management listener`);
  const rest = op.url.replace(/^\/v1\/admin/, '');
  const params = op.params as TObject | undefined;
  const derived: Operation = {
    ...op,
    id,
    listener: 'management',
    access: 'operator',
    tenantParam: 'tenantId',
    url: place.url ?? `/v1/tenants/:tenantId${rest}`,
    summary: place.summary ?? `${op.summary} (an operator, for the tenant the path names)`,
    tag: place.tag,
    objectName: place.objectName ?? op.objectName,
    ...(place.examples !== undefined ? { examples: place.examples } : {}),
    params: Type.Object({ tenantId: TenantIdParams.properties.tenantId, ...(params?.properties ?? {}) }, { additionalProperties: false }),
    errors: [tenantNotFound, ...(place.errors ?? op.errors ?? [])],
    // An operator's reads (a channel list, deliveries, users, the shadow summary) are not recorded (decision 0292).
    audit: op.audit === false || op.method === 'GET' ? false : { ...op.audit, action: op.audit.action ?? op.id, target: { tenantId: 'params', ...op.audit.target } },
  };
  if ('description' in place) {
    if (place.description === undefined) delete derived.description;
    else derived.description = place.description;
  }
  // The id is the one given, the method the source's: their literals key the tables the compiler checks.
  return derived as TypedOperation<Id, Extract<Source, { id: SourceId }>['method']>;
}
