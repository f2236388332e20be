/** Inserts authorizationRow()s from `source` (jsonb_to_record or jsonb_to_recordset): the store's and the audit writer's (0380). */
export const insertAuthorizationsFrom = (source: string, where = ''): string =>
  `INSERT INTO authorizations (tenant_id, id, card_id, entity_id, status, decline_reason, decided_by, amount_minor, approved_minor, held_minor,
     currency, merchant, channel, network_reference, trail, created_at, velocity)
   SELECT a.tenant_id, a.id, a.card_id, a.entity_id, a.status, a.decline_reason, a.decided_by, a.amount_minor, a.approved_minor, a.approved_minor,
          a.currency, a.merchant, a.channel, a.network_reference, a.trail, a.created_at, a.velocity
     FROM ${source} AS a(tenant_id text, id text, card_id text, entity_id text, status text, decline_reason text, decided_by text,
          amount_minor bigint, approved_minor bigint, currency text, merchant jsonb, channel text, network_reference text, trail jsonb,
          created_at timestamptz, velocity jsonb)${where}`;
