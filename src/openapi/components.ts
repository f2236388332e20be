// The schemas the OpenAPI document names (components.schemas), in one place: every TypeBox schema that a
// module of schemas/ exports, by its export name, and the channel schemas composed from the list of channel types. The document builder (src/openapi/hoist.ts) replaces each
// occurrence, however deep, by a $ref, so that generated clients get named types. Route parameters and
// queries become parameters, not schemas; strings stay inline (a named string is no type a client can use).
import { Kind, type TSchema } from '@sinclair/typebox';
import * as audit from '../../schemas/audit.js';
import * as auth from '../../schemas/auth.js';
import * as cardLifecycleRoutes from '../../schemas/card-lifecycle-routes.js';
import * as cards from '../../schemas/cards.js';
import * as channels from '../../schemas/channels.js';
import * as common from '../../schemas/common.js';
import * as coreRouting from '../../schemas/core-routing.js';
import * as creditLine from '../../schemas/credit-line.js';
import * as entities from '../../schemas/entities.js';
import * as keys from '../../schemas/keys.js';
import * as management from '../../schemas/management.js';
import * as pin from '../../schemas/pin.js';
import * as reports from '../../schemas/reports.js';
import * as transactions from '../../schemas/transactions.js';
import { CHANNEL_SCHEMAS } from '../notify/channel-types/schemas.js';

const MODULES: Record<string, unknown>[] = [common, auth, creditLine, cards, cardLifecycleRoutes, entities, transactions, reports, pin, audit, keys, management, channels, CHANNEL_SCHEMAS, coreRouting];

/** Kinds that make a type of their own: objects, unions, enumerations. */
const NAMED_KINDS = new Set(['Object', 'Intersect', 'Union', 'Unsafe']);
/** Parameters, not schemas; and names a reader should not see. */
const UNNAMED = /(Params|Query)$/;
/** `EntityTypeSchema` is the type `EntityType`. */
const nameOf = (exported: string) => exported.replace(/Schema$/, '');

function collect(): Record<string, TSchema> {
  const named: Record<string, TSchema> = {};
  for (const module of MODULES) {
    for (const [exported, value] of Object.entries(module)) {
      const kind = (value as Record<symbol, unknown> | null)?.[Kind];
      if (typeof kind !== 'string' || !NAMED_KINDS.has(kind) || UNNAMED.test(exported)) continue;
      const name = nameOf(exported);
      if (named[name] && named[name] !== value) throw new Error(`Two schemas are exported as ${name}: rename one`);
      named[name] = value as TSchema;
    }
  }
  return named;
}

export const NAMED_SCHEMAS: Readonly<Record<string, TSchema>> = collect();
