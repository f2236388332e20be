// A tenant's spend-control rules (decision 0332): each rule a row naming what it applies to and which of its
// versions is active and which shadowed; each version a definition stored once and never changed.
import { LRUCache } from 'lru-cache';
import { uuidv7 } from 'uuidv7';
import {
  RULES_PER_TARGET,
  type AuthRuleCreateBody,
  type AuthRuleDetail,
  type AuthRulePatchBody,
  type AuthRuleView,
  type BacktestReport,
  type RuleDefinition,
  type RuleLevel,
  type RuleVersionView,
} from '../../../schemas/auth-rules.js';
import { Errors } from '../../errors.js';
import { keyPage, type KeyPage } from '../../paging/key-cursor.js';
import type { Db, Queryable } from '../../store/db.js';
import type { Change, ChangeFeed } from '../infrastructure/changes.js';
import { cacheTtl } from '../infrastructure/cache-ttl.js';
import { backtest, type BacktestTarget } from './backtest.js';

interface RuleRow {
  id: string;
  name: string;
  level: RuleLevel;
  target_id: string;
  kind: 'conditions' | 'velocity';
  active_version: number | null;
  shadow_version: number | null;
  active: RuleDefinition | null;
  shadow: RuleDefinition | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** A rule as the pipeline evaluates it: its enforced and its shadowed definition. */
export interface LoadedRule {
  id: string;
  name: string;
  versions: { mode: 'active' | 'shadow'; version: number; definition: RuleDefinition }[];
}

/** A tenant's rules, indexed by what they apply to, kept until a change is told (decision 0359; CACHED_RULES_MAX). */
interface TenantRules {
  tenant: LoadedRule[];
  byCard: Map<string, LoadedRule[]>;
  byEntity: Map<string, LoadedRule[]>;
}
const CACHED_RULES_MAX = 2_000;
/** Rules held by the cache across tenants (each tenant's count, at least one). */
const CACHE_RULES_BOUND = 500_000;

const SELECT = `SELECT r.id::text, r.name, r.level, r.target_id, r.kind, r.active_version, r.shadow_version, a.definition AS active, s.definition AS shadow,
  r.created_at, r.updated_at
  FROM auth_rules r
  LEFT JOIN auth_rule_versions a ON a.tenant_id = r.tenant_id AND a.rule_id = r.id AND a.version = r.active_version
  LEFT JOIN auth_rule_versions s ON s.tenant_id = r.tenant_id AND s.rule_id = r.id AND s.version = r.shadow_version`;

const iso = (d: Date | string) => new Date(d).toISOString();

function viewOf(r: RuleRow): AuthRuleView {
  return {
    ruleId: r.id,
    name: r.name,
    level: r.level,
    cardId: r.level === 'card' ? r.target_id : null,
    entityId: r.level === 'entity' ? r.target_id : null,
    kind: r.kind,
    activeVersion: r.active_version,
    shadowVersion: r.shadow_version,
    active: r.active,
    shadow: r.shadow,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

/** Only what defines a version: a PATCH's name or mode is no new version. */
const definitionOf = (b: { declineReason?: RuleDefinition['declineReason']; conditions?: RuleDefinition['conditions']; velocity?: RuleDefinition['velocity'] }): RuleDefinition => ({
  ...(b.declineReason !== undefined ? { declineReason: b.declineReason } : {}),
  ...(b.conditions !== undefined ? { conditions: b.conditions } : {}),
  ...(b.velocity !== undefined ? { velocity: b.velocity } : {}),
});

/**
 * A write held for approval enforces what its checker saw: a rule changed since it was held (a new shadow version
 * put in its place) is refused, not enforced unseen.
 */
function unchangedSince(r: RuleRow, heldAt: Date | null): RuleRow {
  if (heldAt && new Date(r.updated_at) > heldAt) {
    throw Errors.business('AUTH_RULE_CHANGED', `Rule ${r.id} changed after this request was held for approval; nothing was enforced. Make the request again.`);
  }
  return r;
}

function loadedOf(row: RuleRow): LoadedRule {
  return {
    id: row.id,
    name: row.name,
    versions: [
      ...(row.active && row.active_version !== null ? [{ mode: 'active' as const, version: row.active_version, definition: row.active }] : []),
      ...(row.shadow && row.shadow_version !== null ? [{ mode: 'shadow' as const, version: row.shadow_version, definition: row.shadow }] : []),
    ],
  };
}

export class AuthRuleStore {
  private readonly cache: LRUCache<string, TenantRules | 'uncached'>;
  /** Changes told so far: a read that saw one told while it ran does not cache what it read (decision 0071). */
  private invalidations = 0;

  /** `changes`: rule changes are told to every process (and heard from them); without it nothing is cached. */
  constructor(
    private readonly db: Db,
    private readonly changes?: ChangeFeed,
    cacheTtlMs: number | null = null,
  ) {
    this.cache = new LRUCache({
      maxSize: CACHE_RULES_BOUND,
      sizeCalculation: (v) => (v === 'uncached' ? 1 : Math.max(1, v.tenant.length + [...v.byCard.values(), ...v.byEntity.values()].reduce((n, l) => n + l.length, 0))),
      ...cacheTtl(cacheTtlMs),
    });
    changes?.subscribe((change) => this.heard(change));
  }

  private heard(change: Change): void {
    if (change.kind === 'auth-rules' || change.kind === 'tenant') {
      this.invalidations++;
      this.cache.delete(change.tenantId);
    } else if (change.kind === 'all') {
      this.invalidations++;
      this.cache.clear();
    }
  }

  /** Tells every process (on commit of `tx`) that the tenant's rules changed. */
  private publish(tenantId: string, tx: Queryable): Promise<void> {
    return this.changes?.publish({ kind: 'auth-rules', tenantId }, tx) ?? Promise.resolve();
  }

  private told(tenantId: string): void {
    this.changes?.told({ kind: 'auth-rules', tenantId });
  }

  private async row(q: Queryable, tenantId: string, ruleId: string, lock = false): Promise<RuleRow> {
    const r = await q.query<RuleRow>(`${SELECT} WHERE r.tenant_id = $1 AND r.id = $2::uuid${lock ? ' FOR UPDATE OF r' : ''}`, [tenantId, ruleId]);
    if (!r.rows[0]) throw Errors.authRuleNotFound(ruleId);
    return r.rows[0];
  }

  private async addVersion(q: Queryable, tenantId: string, ruleId: string, version: number, definition: RuleDefinition, by: string | null): Promise<void> {
    await q.query(`INSERT INTO auth_rule_versions (tenant_id, rule_id, version, definition, created_by) VALUES ($1, $2::uuid, $3, $4::jsonb, $5)`, [
      tenantId,
      ruleId,
      version,
      JSON.stringify(definition),
      by,
    ]);
  }

  async create(tenantId: string, body: AuthRuleCreateBody, by: string | null): Promise<AuthRuleView> {
    const level: RuleLevel = body.cardId !== undefined ? 'card' : body.entityId !== undefined ? 'entity' : 'tenant';
    const target = body.cardId ?? body.entityId ?? '';
    const id = uuidv7();
    const mode = body.mode ?? 'shadow';
    await this.db.transaction(async (tx) => {
      // Rules of one target are counted under its lock, so parallel creates cannot pass the bound together.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`auth-rules|${tenantId}|${level}|${target}`]);
      const n = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM auth_rules WHERE tenant_id = $1 AND level = $2 AND target_id = $3`, [tenantId, level, target]);
      if (n.rows[0]!.n >= RULES_PER_TARGET) {
        const whose = level === 'tenant' ? 'The tenant' : `${level === 'card' ? 'Card' : 'Entity'} ${target}`;
        throw Errors.business('AUTH_RULE_LIMIT', `${whose} has ${RULES_PER_TARGET} rules already, the most one target may have; remove one first.`);
      }
      await tx.query(
        `INSERT INTO auth_rules (tenant_id, id, name, level, target_id, kind, active_version, shadow_version, latest_version)
         VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, 1)`,
        [tenantId, id, body.name, level, target, body.velocity ? 'velocity' : 'conditions', mode === 'active' ? 1 : null, mode === 'shadow' ? 1 : null],
      );
      await this.addVersion(tx, tenantId, id, 1, definitionOf(body), by);
      await this.publish(tenantId, tx);
    });
    this.told(tenantId);
    return viewOf(await this.row(this.db, tenantId, id));
  }

  /**
   * A new definition is a new version: shadowed beside the active one, or active at once when `mode` says so.
   * `mode` alone promotes the shadow version (`active`) or stops enforcing the active one (`shadow`).
   */
  async update(tenantId: string, ruleId: string, patch: AuthRulePatchBody, by: string | null, heldAt: Date | null = null): Promise<AuthRuleView> {
    await this.db.transaction(async (tx) => {
      const r = unchangedSince(await this.row(tx, tenantId, ruleId, true), heldAt);
      const changes = definitionOf(patch);
      let active = r.active_version;
      let shadow = r.shadow_version;
      let latest: number | null = null;
      if (Object.keys(changes).length > 0) {
        // The new version starts from the newest one this rule enforces or shadows.
        const base = (r.shadow ?? r.active ?? {}) as RuleDefinition;
        const definition = { ...base, ...changes };
        const v = await tx.query<{ v: number }>(`UPDATE auth_rules SET latest_version = latest_version + 1 WHERE tenant_id = $1 AND id = $2::uuid RETURNING latest_version AS v`, [tenantId, ruleId]);
        latest = v.rows[0]!.v;
        await this.addVersion(tx, tenantId, ruleId, latest, definition, by);
        if (patch.mode === 'active') [active, shadow] = [latest, null];
        else shadow = latest;
      } else if (patch.mode === 'active') {
        if (shadow === null && active === null) throw Errors.business('AUTH_RULE_NO_SHADOW', `Rule ${ruleId} has no version to enforce.`);
        if (shadow !== null) [active, shadow] = [shadow, null];
      } else if (patch.mode === 'shadow') {
        [active, shadow] = [null, shadow ?? active];
      }
      await tx.query(
        `UPDATE auth_rules SET name = COALESCE($3, name), active_version = $4, shadow_version = $5, updated_at = now() WHERE tenant_id = $1 AND id = $2::uuid`,
        [tenantId, ruleId, patch.name ?? null, active, shadow],
      );
      await this.publish(tenantId, tx);
    });
    this.told(tenantId);
    return viewOf(await this.row(this.db, tenantId, ruleId));
  }

  /** The shadow version becomes the active one (the active one it replaces is retired). */
  async promote(tenantId: string, ruleId: string, heldAt: Date | null = null): Promise<AuthRuleView> {
    await this.db.transaction(async (tx) => {
      const r = unchangedSince(await this.row(tx, tenantId, ruleId, true), heldAt);
      if (r.shadow_version === null) throw Errors.business('AUTH_RULE_NO_SHADOW', `Rule ${ruleId} has no shadow version to promote.`);
      await tx.query(`UPDATE auth_rules SET active_version = shadow_version, shadow_version = NULL, updated_at = now() WHERE tenant_id = $1 AND id = $2::uuid`, [tenantId, ruleId]);
      await this.publish(tenantId, tx);
    });
    this.told(tenantId);
    return viewOf(await this.row(this.db, tenantId, ruleId));
  }

  /** Removes the rule with its versions and its counters. */
  async remove(tenantId: string, ruleId: string): Promise<void> {
    const r = await this.db.query(`DELETE FROM auth_rules WHERE tenant_id = $1 AND id = $2::uuid`, [tenantId, ruleId]);
    if (r.rowCount === 0) throw Errors.authRuleNotFound(ruleId);
    await this.changes?.changed({ kind: 'auth-rules', tenantId });
  }

  async get(tenantId: string, ruleId: string): Promise<AuthRuleDetail> {
    const r = await this.row(this.db, tenantId, ruleId);
    const versions = await this.db.query<{ version: number; definition: RuleDefinition; created_by: string | null; created_at: Date | string }>(
      `SELECT version, definition, created_by, created_at FROM auth_rule_versions WHERE tenant_id = $1 AND rule_id = $2::uuid ORDER BY version`,
      [tenantId, ruleId],
    );
    const modeOf = (v: number): RuleVersionView['mode'] => (v === r.active_version ? 'active' : v === r.shadow_version ? 'shadow' : 'retired');
    return {
      ...viewOf(r),
      versions: versions.rows.map((v) => ({ version: v.version, mode: modeOf(v.version), definition: v.definition, createdBy: v.created_by, createdAt: iso(v.created_at) })),
    };
  }

  /** One version's definition (a backtest's), or null when the rule has no such version. */
  async version(tenantId: string, ruleId: string, version: number): Promise<RuleDefinition | null> {
    const r = await this.db.query<{ definition: RuleDefinition }>(
      `SELECT definition FROM auth_rule_versions WHERE tenant_id = $1 AND rule_id = $2::uuid AND version = $3`,
      [tenantId, ruleId, version],
    );
    return r.rows[0]?.definition ?? null;
  }

  /** Replays the range's stored authorizations through one version; reads only. */
  backtest(tenantId: string, timeZone: string, target: BacktestTarget, from: Date, to: Date): Promise<BacktestReport> {
    return backtest(this.db, tenantId, timeZone, target, from, to);
  }

  /** In id order (UUIDv7: oldest first), optionally one card's or one entity's. */
  async page(tenantId: string, { limit, after, cardId, entityId }: { limit: number; after: string | null; cardId?: string; entityId?: string }): Promise<KeyPage<AuthRuleView>> {
    const level = cardId !== undefined ? 'card' : entityId !== undefined ? 'entity' : null;
    const r = await this.db.query<RuleRow>(
      `${SELECT} WHERE r.tenant_id = $1 AND ($2::uuid IS NULL OR r.id > $2::uuid) AND ($3::text IS NULL OR (r.level = $3 AND r.target_id = $4))
       ORDER BY r.id LIMIT $5`,
      [tenantId, after, level, cardId ?? entityId ?? null, limit + 1],
    );
    return keyPage(r.rows, limit, (row) => row.id, viewOf);
  }

  /**
   * The rules an authorization of the card meets, oldest first: the tenant's, the card's and, when the entity is
   * known, the entity's. `entityRules` says whether the tenant has entity rules at all (to look the entity up).
   */
  async forAuthorization(tenantId: string, cardId: string, entityId: string | null): Promise<{ rules: LoadedRule[]; entityRules: boolean }> {
    const cached = this.changes ? (this.cache.get(tenantId) ?? (await this.load(tenantId))) : 'uncached';
    if (cached === 'uncached') return this.query(tenantId, cardId, entityId);
    const card = cached.byCard.get(cardId);
    const entity = entityId === null ? undefined : cached.byEntity.get(entityId);
    const rules = card || entity ? [...cached.tenant, ...(card ?? []), ...(entity ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) : cached.tenant;
    return { rules, entityRules: cached.byEntity.size > 0 };
  }

  /** Reads the tenant's enforced and shadowed rules into the cache, unless there are too many of them. */
  private async load(tenantId: string): Promise<TenantRules | 'uncached'> {
    const seen = this.invalidations;
    const r = await this.db.query<RuleRow>(
      `${SELECT} WHERE r.tenant_id = $1 AND (r.active_version IS NOT NULL OR r.shadow_version IS NOT NULL) ORDER BY r.id LIMIT $2`,
      [tenantId, CACHED_RULES_MAX + 1],
      { name: 'auth-rules-of-tenant' },
    );
    let loaded: TenantRules | 'uncached' = 'uncached';
    if (r.rows.length <= CACHED_RULES_MAX) {
      const tenant: LoadedRule[] = [];
      const byCard = new Map<string, LoadedRule[]>();
      const byEntity = new Map<string, LoadedRule[]>();
      for (const row of r.rows) {
        const rule = loadedOf(row);
        if (row.level === 'tenant') tenant.push(rule);
        else {
          const index = row.level === 'card' ? byCard : byEntity;
          const list = index.get(row.target_id);
          if (list) list.push(rule);
          else index.set(row.target_id, [rule]);
        }
      }
      loaded = { tenant, byCard, byEntity };
    }
    // A change told while the rules were read may be newer than them: the next authorization reads again.
    if (seen === this.invalidations) this.cache.set(tenantId, loaded);
    return loaded;
  }

  /** The rules of one authorization, read from the store. */
  private async query(tenantId: string, cardId: string, entityId: string | null): Promise<{ rules: LoadedRule[]; entityRules: boolean }> {
    // One round trip: whether the tenant has entity rules at all comes back even when no rule matches.
    const r = await this.db.query<(RuleRow | { [K in keyof RuleRow]: null }) & { entity_rules: boolean }>(
      `SELECT f.entity_rules, x.* FROM (SELECT EXISTS (SELECT 1 FROM auth_rules e WHERE e.tenant_id = $1 AND e.level = 'entity') AS entity_rules) f
       LEFT JOIN LATERAL (${SELECT}
         WHERE r.tenant_id = $1 AND (r.active_version IS NOT NULL OR r.shadow_version IS NOT NULL)
           AND (r.level = 'tenant' OR (r.level = 'card' AND r.target_id = $2) OR (r.level = 'entity' AND r.target_id = $3))) x ON true
       ORDER BY x.id`,
      [tenantId, cardId, entityId],
      { name: 'auth-rules-for-authorization' },
    );
    const rules = r.rows.flatMap((row) => (row.id === null ? [] : [loadedOf(row)]));
    const entityRules = r.rows[0]?.entity_rules ?? false;
    return { rules, entityRules };
  }
}
