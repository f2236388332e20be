// A tenant's notification channels (decision 0080), of the types the list declares (decision 0240): stored per
// tenant; a signing secret (`whsec_`) and a type's secret settings (a broker URL's credentials) are sealed under
// the master key, bound to the tenant and channel; a signing secret is shown once when created or rotated; none
// is ever listed, logged or kept with an attempt.
import { uuidv7 } from 'uuidv7';
import type { NotifyConfig } from '../config.js';
import type { MasterKey } from '../crypto/master-key.js';
import { Errors } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { keyPage, type KeyPage } from '../paging/key-cursor.js';
import type { Resolver } from './addresses.js';
import { CHANNEL_TYPE_NAMES, channelTypeOf, ownFieldsOf, typeFieldErrors } from './channel-types/registry.js';
import type { ChannelCreateBody, ChannelPatchBody, ChannelView } from './channel-types/schemas.js';
import type { ChannelTypeDeclaration, CheckContext, StoredFields } from './channel-types/type.js';
import { newSecret } from './webhook.js';

interface ChannelRow {
  tenant_id: string;
  id: string;
  type: string;
  event_types: string[];
  enabled: boolean;
  description: string | null;
  url: string | null;
  settings: Record<string, unknown>;
  settings_sealed: string | null;
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A channel as the delivery worker uses it: the secrets opened, in memory only. */
export interface Channel {
  tenantId: string;
  id: string;
  type: string;
  eventTypes: string[];
  enabled: boolean;
  url: string | null;
  settings: Record<string, unknown>;
  /** The type's secret settings, opened (null when it keeps none). */
  secret: Record<string, string> | null;
  /** The current signing secret first, then the previous one while its overlap lasts. */
  secrets: string[];
}

const iso = (d: Date | null): string | undefined => (d ? new Date(d).toISOString() : undefined);

const aad = (tenantId: string, channelId: string) => `cardline-webhook-secret:${tenantId}:${channelId}`;
const settingsAad = (tenantId: string, channelId: string) => `cardline-channel-settings:${tenantId}:${channelId}`;

const COLUMNS = `tenant_id, id, type, event_types, enabled, description, url, settings, settings_sealed, secret_sealed,
                 previous_secret_sealed, previous_secret_until, disabled_reason, created_at, updated_at`;

/** The declaration of a stored channel's type; a type this version does not know is a bug or a newer writer. */
function declarationOf(type: string): ChannelTypeDeclaration {
  const d = channelTypeOf(type);
  if (!d) throw new Error(`The store holds a channel of type '${type}', which this version of the gateway does not know`);
  return d;
}

export class ChannelService {
  constructor(
    private readonly db: Queryable,
    private readonly masterKey: MasterKey,
    private readonly config: NotifyConfig,
    /** Tests resolve names their own way. */
    private readonly resolve?: Resolver,
  ) {}

  /** Writes the list's channel types where `channels.type`'s foreign key finds them (decision 0240), at every start. */
  async registerTypes(): Promise<void> {
    await this.db.query('INSERT INTO channel_types (type) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING', [CHANNEL_TYPE_NAMES]);
  }

  private view(r: ChannelRow): ChannelView {
    const previousLive = r.previous_secret_until && new Date(r.previous_secret_until).getTime() > Date.now();
    return {
      channelId: r.id,
      type: r.type as ChannelView['type'],
      eventTypes: r.event_types,
      enabled: r.enabled,
      ...(r.description !== null ? { description: r.description } : {}),
      ...declarationOf(r.type).view({ tenantId: r.tenant_id, url: r.url, settings: r.settings ?? {} }, this.config),
      ...(r.disabled_reason !== null ? { disabledReason: r.disabled_reason } : {}),
      ...(previousLive ? { previousSecretUntil: iso(r.previous_secret_until)! } : {}),
      createdAt: iso(r.created_at)!,
      updatedAt: iso(r.updated_at)!,
    };
  }

  private context(tenantId: string, sandbox: boolean): CheckContext {
    return { tenantId, sandbox, config: this.config, resolve: this.resolve };
  }

  private sealSettings(tenantId: string, channelId: string, secret: Record<string, string> | null | undefined): string | null {
    return secret ? this.masterKey.seal(JSON.stringify(secret), settingsAad(tenantId, channelId)) : null;
  }

  private async row(tenantId: string, channelId: string, db: Queryable = this.db): Promise<ChannelRow> {
    const r = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM channels WHERE tenant_id = $1 AND id = $2`, [tenantId, channelId]);
    if (!r.rows[0]) throw Errors.channelNotFound(channelId);
    return r.rows[0];
  }

  /** One page of the tenant's channels in id order (UUIDv7: oldest first): `limit` after the id `after` (key-cursor.ts). */
  async page(tenantId: string, { limit, after }: { limit: number; after: string | null }): Promise<KeyPage<ChannelView>> {
    const r = await this.db.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM channels WHERE tenant_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [tenantId, after, limit + 1],
    );
    return keyPage(r.rows, limit, (row) => row.id, (row) => this.view(row));
  }

  async get(tenantId: string, channelId: string): Promise<ChannelView> {
    return this.view(await this.row(tenantId, channelId));
  }

  async create(tenantId: string, sandbox: boolean, body: ChannelCreateBody): Promise<ChannelView & { secret?: string }> {
    const d = declarationOf(body.type);
    const stored: StoredFields = await d.prepare(ownFieldsOf(body, d), this.context(tenantId, sandbox));
    const id = uuidv7();
    const secret = d.signingSecret ? newSecret() : null;
    const r = await this.db.query<ChannelRow>(
      `INSERT INTO channels (tenant_id, id, type, event_types, enabled, description, url, settings, settings_sealed, secret_sealed)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8::jsonb, $9, $10) RETURNING ${COLUMNS}`,
      [tenantId, id, body.type, JSON.stringify(body.eventTypes), body.enabled ?? true, body.description ?? null, stored.url ?? null,
        JSON.stringify(stored.settings ?? {}), this.sealSettings(tenantId, id, stored.secret),
        secret === null ? null : this.masterKey.seal(secret, aad(tenantId, id))],
    );
    return { ...this.view(r.rows[0]!), ...(secret !== null ? { secret } : {}) };
  }

  async update(tenantId: string, sandbox: boolean, channelId: string, patch: ChannelPatchBody): Promise<ChannelView> {
    const current = await this.row(tenantId, channelId);
    const d = declarationOf(current.type);
    const refused = typeFieldErrors(patch, current.type, 'channelPatch', 'patch');
    if (refused.length) throw Errors.validation(refused);
    const own = ownFieldsOf(patch, d);
    // A type checks only what changes: a PATCH of eventTypes alone asks nothing of it.
    const stored: StoredFields = Object.keys(own).length
      ? await d.prepare(own, this.context(tenantId, sandbox), { tenantId, url: current.url, settings: current.settings ?? {} })
      : {};
    const r = await this.db.query<ChannelRow>(
      `UPDATE channels SET
         event_types = COALESCE($3::jsonb, event_types),
         enabled = COALESCE($4, enabled),
         description = CASE WHEN $5 THEN $6 ELSE description END,
         url = CASE WHEN $7 THEN $8 ELSE url END,
         settings = COALESCE($9::jsonb, settings),
         settings_sealed = CASE WHEN $10 THEN $11 ELSE settings_sealed END,
         disabled_reason = CASE WHEN $4 IS TRUE THEN NULL ELSE disabled_reason END,
         updated_at = now()
       WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenantId, channelId, patch.eventTypes ? JSON.stringify(patch.eventTypes) : null, patch.enabled ?? null,
        patch.description !== undefined, patch.description ?? null, stored.url !== undefined, stored.url ?? null,
        stored.settings ? JSON.stringify(stored.settings) : null, stored.secret !== undefined, this.sealSettings(tenantId, channelId, stored.secret)],
    );
    if (!r.rows[0]) throw Errors.channelNotFound(channelId);
    return this.view(r.rows[0]);
  }

  /** Removes a channel with its deliveries and their attempts. */
  async remove(tenantId: string, channelId: string): Promise<void> {
    const r = await this.db.query('DELETE FROM channels WHERE tenant_id = $1 AND id = $2', [tenantId, channelId]);
    if (r.rowCount === 0) throw Errors.channelNotFound(channelId);
  }

  /** A new secret; the previous one keeps signing for `overlapSeconds` (both signatures are sent). */
  async rotateSecret(tenantId: string, channelId: string, overlapSeconds?: number): Promise<ChannelView & { secret: string }> {
    const current = await this.row(tenantId, channelId);
    if (!declarationOf(current.type).signingSecret) throw Errors.business('CHANNEL_NOT_WEBHOOK', 'Only a webhook channel has a signing secret.');
    const overlap = overlapSeconds ?? this.config.secretOverlapHours * 3600;
    const secret = newSecret();
    const r = await this.db.query<ChannelRow>(
      `UPDATE channels SET secret_sealed = $3, previous_secret_sealed = $4,
              previous_secret_until = now() + $5::integer * interval '1 second', updated_at = now()
        WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenantId, channelId, this.masterKey.seal(secret, aad(tenantId, channelId)), overlap > 0 ? current.secret_sealed : null, overlap],
    );
    if (!r.rows[0]) throw Errors.channelNotFound(channelId);
    return { ...this.view(r.rows[0]), secret };
  }

  /** The gateway disables a channel whose receiver answered 410 Gone. */
  async disable(tenantId: string, channelId: string, reason: string): Promise<void> {
    await this.db.query('UPDATE channels SET enabled = false, disabled_reason = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenantId, channelId, reason]);
  }

  /** Channels with their secrets opened, for delivery; unknown ids are left out. */
  async forDelivery(keys: readonly { tenantId: string; channelId: string }[]): Promise<Map<string, Channel>> {
    const out = new Map<string, Channel>();
    if (!keys.length) return out;
    const r = await this.db.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM channels c
        WHERE (c.tenant_id, c.id) IN (SELECT k.tenant_id, k.channel_id FROM jsonb_to_recordset($1::jsonb) AS k(tenant_id text, channel_id uuid))`,
      [JSON.stringify(keys.map((k) => ({ tenant_id: k.tenantId, channel_id: k.channelId })))],
    );
    for (const row of r.rows) {
      const secrets: string[] = [];
      if (row.secret_sealed) secrets.push(this.masterKey.open(row.secret_sealed, aad(row.tenant_id, row.id)));
      if (row.previous_secret_sealed && row.previous_secret_until && new Date(row.previous_secret_until).getTime() > Date.now()) {
        secrets.push(this.masterKey.open(row.previous_secret_sealed, aad(row.tenant_id, row.id)));
      }
      const secret = row.settings_sealed ? (JSON.parse(this.masterKey.open(row.settings_sealed, settingsAad(row.tenant_id, row.id))) as Record<string, string>) : null;
      out.set(`${row.tenant_id}/${row.id}`, {
        tenantId: row.tenant_id, id: row.id, type: row.type, eventTypes: row.event_types, enabled: row.enabled, url: row.url,
        settings: row.settings ?? {}, secret, secrets,
      });
    }
    return out;
  }
}
