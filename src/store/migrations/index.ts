// The schema, one migration an entry. Every table is keyed by tenant_id first (DESIGN §5).
export interface Migration {
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    name: '0001-gateway-core',
    sql: `
CREATE TABLE tenants (
  tenant_id   text PRIMARY KEY,
  name        text NOT NULL,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  config      jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  username      text NOT NULL,
  id            uuid NOT NULL,
  role          text NOT NULL CHECK (role IN ('Admin', 'Operations', 'API Integration', 'Read-Only')),
  password_hash text NOT NULL,
  disabled      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, username)
);

CREATE TABLE login_attempts (
  tenant_id       text NOT NULL,
  username        text NOT NULL,
  failures        integer NOT NULL DEFAULT 0,
  locked_until    timestamptz,
  last_failure_at timestamptz,
  PRIMARY KEY (tenant_id, username),
  FOREIGN KEY (tenant_id, username) REFERENCES users (tenant_id, username) ON DELETE CASCADE
);

CREATE TABLE keys (
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  kid             text NOT NULL,
  use             text NOT NULL CHECK (use IN ('enc', 'sig')),
  alg             text NOT NULL,
  public_jwk      jsonb NOT NULL,
  private_jwk_enc text NOT NULL,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retiring', 'retired')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, kid)
);

CREATE TABLE jwe_replay (
  tenant_id  text NOT NULL,
  jti        text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, jti)
);
CREATE INDEX jwe_replay_expiry ON jwe_replay (expires_at);

CREATE TABLE audit_heads (
  tenant_id text PRIMARY KEY,
  seq       bigint NOT NULL,
  hash      text NOT NULL
);

CREATE TABLE audit_log (
  tenant_id  text NOT NULL,
  seq        bigint NOT NULL,
  id         uuid NOT NULL,
  at         timestamptz NOT NULL,
  actor      text,
  role       text,
  action     text NOT NULL,
  method     text NOT NULL,
  route      text NOT NULL,
  target     jsonb NOT NULL,
  outcome    text NOT NULL,
  status     integer NOT NULL,
  request_id text NOT NULL,
  origin     text,
  prev_hash  text NOT NULL,
  hash       text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
`,
  },
  {
    // Idempotency keys (DESIGN §1): one row per (tenant, caller, route, key), the request's fingerprint and,
    // once completed, the response replayed to duplicates. Rows expire after CARDLINE_IDEMPOTENCY_TTL_HOURS.
    name: '0002-idempotency',
    sql: `
CREATE TABLE idempotency_keys (
  tenant_id     text NOT NULL,
  scope_hash    text NOT NULL,
  fingerprint   text NOT NULL,
  state         text NOT NULL CHECK (state IN ('in_flight', 'completed', 'released')),
  connector_key text NOT NULL,
  lock_token    uuid,
  locked_at     timestamptz,
  status        integer,
  content_type  text,
  body          text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, scope_hash)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
`,
  },
  {
    // GET /v1/audit filters by time, actor and request id within a tenant; pages walk the primary key.
    name: '0003-audit-query',
    sql: `
CREATE INDEX audit_log_at ON audit_log (tenant_id, at);
CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor, seq);
CREATE INDEX audit_log_request ON audit_log (tenant_id, request_id);
`,
  },
  {
    // Events of record, written in the audit batch's transaction; workers claim them with SKIP LOCKED.
    name: '0004-outbox',
    sql: `
CREATE TABLE outbox (
  tenant_id     text NOT NULL,
  id            uuid NOT NULL,
  audit_seq     bigint NOT NULL,
  type          text NOT NULL,
  aggregate_id  text NOT NULL,
  payload       jsonb NOT NULL,
  request_id    text NOT NULL,
  created_at    timestamptz NOT NULL,
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
  attempts      integer NOT NULL DEFAULT 0,
  available_at  timestamptz NOT NULL DEFAULT now(),
  claimed_by    text,
  claimed_until timestamptz,
  last_error    text,
  done_at       timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX outbox_pending ON outbox (available_at, tenant_id, id) WHERE status = 'pending';
CREATE INDEX outbox_aggregate ON outbox (tenant_id, aggregate_id, created_at);
`,
  },
  {
    // PIN keys of the software HSM (development), sealed under the master key; a PKCS#11 HSM keeps its own.
    name: '0005-hsm-keys',
    sql: `
CREATE TABLE hsm_keys (
  tenant_id  text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  key_id     text NOT NULL,
  type       text NOT NULL CHECK (type IN ('tdes2', 'aes128', 'aes256')),
  sealed_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key_id)
);
`,
  },
  {
    // Gateway key rotation (decision 0021): when a retiring key stops being accepted. Clients' public keys
    // for response fields (DESIGN §4): one per tenant, replaced on re-registration.
    name: '0006-client-keys',
    sql: `
ALTER TABLE keys ADD COLUMN retire_at timestamptz;

CREATE TABLE client_keys (
  tenant_id  text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  kid        text NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id)
);
`,
  },
  {
    // Login attempts under way are counted, so that a burst of concurrent guesses cannot outrun the lock.
    name: '0007-login-attempts-in-flight',
    sql: `
ALTER TABLE login_attempts ADD COLUMN in_flight integer NOT NULL DEFAULT 0;
ALTER TABLE login_attempts ADD COLUMN in_flight_at timestamptz;
`,
  },
  {
    // Live administration (decision 0034): operator API keys (only a hash is stored), a version per tenant so
    // that a request keeps the configuration it started with, and per-user token generations (revocation).
    name: '0008-live-administration',
    sql: `
-- The platform's own rows live under the pseudo-tenant '_platform' (as its audit chain does), so that this
-- table too is keyed by tenant_id first (DESIGN §5).
CREATE TABLE operator_keys (
  tenant_id    text NOT NULL DEFAULT '_platform' CHECK (tenant_id = '_platform'),
  name         text NOT NULL,
  id           uuid NOT NULL,
  key_hash     text NOT NULL,
  prefix       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz,
  PRIMARY KEY (tenant_id, name),
  UNIQUE (tenant_id, key_hash)
);

ALTER TABLE tenants ADD COLUMN version bigint NOT NULL DEFAULT 1;

ALTER TABLE users ADD COLUMN token_generation integer NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN last_login_at timestamptz;
ALTER TABLE users ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
`,
  },
  {
    // Reports read events by tenant and time, and by tenant, type and time.
    name: '0009-outbox-reports',
    sql: `
CREATE INDEX outbox_created ON outbox (tenant_id, created_at);
CREATE INDEX outbox_type_created ON outbox (tenant_id, type, created_at);
`,
  },
  {
    // GET /v1/audit filtered by action or outcome, newest first: without these a rare action or outcome walked
    // the whole trail backwards (0.9 s at 1 000 000 records). Each costs an index entry per record written.
    name: '0010-audit-filters',
    sql: `
CREATE INDEX audit_log_action ON audit_log (tenant_id, action, seq);
CREATE INDEX audit_log_outcome ON audit_log (tenant_id, outcome, seq);
`,
  },
  {
    // Notification channels (decision 0080): a tenant's webhooks and NATS subjects; one delivery per event and
    // channel, fanned out from the outbox and claimed with SKIP LOCKED and a lease; every attempt kept.
    name: '0011-notification-channels',
    sql: `
CREATE TABLE channels (
  tenant_id              text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  id                     uuid NOT NULL,
  type                   text NOT NULL CHECK (type IN ('webhook', 'nats')),
  event_types            jsonb NOT NULL,
  enabled                boolean NOT NULL DEFAULT true,
  description            text,
  url                    text,
  secret_sealed          text,
  previous_secret_sealed text,
  previous_secret_until  timestamptz,
  disabled_reason        text,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE deliveries (
  tenant_id        text NOT NULL,
  id               uuid NOT NULL,
  seq              bigint GENERATED ALWAYS AS IDENTITY,
  channel_id       uuid NOT NULL,
  event_id         uuid NOT NULL,
  event_type       text NOT NULL,
  payload          jsonb NOT NULL,
  event_created_at timestamptz NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  claimed_by       text,
  claimed_until    timestamptz,
  last_status      integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  delivered_at     timestamptz,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, channel_id, event_id),
  FOREIGN KEY (tenant_id, channel_id) REFERENCES channels (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'delivering');
CREATE INDEX deliveries_channel ON deliveries (tenant_id, channel_id, seq);

CREATE TABLE delivery_attempts (
  tenant_id   text NOT NULL,
  id          uuid NOT NULL DEFAULT gen_random_uuid(),
  delivery_id uuid NOT NULL,
  n           integer NOT NULL,
  at          timestamptz NOT NULL DEFAULT now(),
  status_code integer,
  duration_ms integer NOT NULL,
  error       text,
  worker      text NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, delivery_id) REFERENCES deliveries (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (tenant_id, delivery_id, at);
`,
  },
  {
    // Fair delivery (decision 0130): a claim walks the channels with unsettled deliveries (one probe each) and
    // takes each one's oldest due deliveries; attempts under way are counted per channel from a small index
    // (a row leaves it when settled). The global due index served the oldest-first claim it replaces.
    name: '0012-fair-delivery',
    sql: `
DROP INDEX deliveries_due;
CREATE INDEX deliveries_channel_due ON deliveries (tenant_id, channel_id, next_attempt_at, seq) WHERE status IN ('pending', 'delivering');
CREATE INDEX deliveries_claimed ON deliveries (tenant_id, channel_id) WHERE claimed_by IS NOT NULL;
`,
  },
  {
    // Shadow mode (decision 0112): what a candidate core answered differently, and counts per outcome.
    name: '0013-shadow-divergences',
    sql: `
CREATE TABLE shadow_divergences (
  tenant_id   text NOT NULL,
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  id          uuid NOT NULL,
  at          timestamptz NOT NULL DEFAULT now(),
  operation   text NOT NULL,
  connector   text NOT NULL,
  request_id  text NOT NULL,
  differences jsonb NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);

CREATE TABLE shadow_calls (
  tenant_id text NOT NULL,
  operation text NOT NULL,
  outcome   text NOT NULL CHECK (outcome IN ('match', 'diverged', 'error', 'dropped')),
  calls     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, operation, outcome)
);
`,
  },
  {
    // Idempotency-Key on every write (decision 0175): an answer holding a secret shown once (a
    // channel's signing secret, an operator key) is stored sealed under a key derived from the master key.
    name: '0014-idempotency-sealed-answers',
    sql: `
ALTER TABLE idempotency_keys ADD COLUMN sealed boolean NOT NULL DEFAULT false;
`,
  },
  {
    // Audit chains per writer (decision 0200): every AuditWriter (a gateway process, a thread) appends
    // to a chain of its own, so writers never contend for one head; a tenant's trail is the union of its chains,
    // verified chain by chain. audit_heads only hands out seqs now (blocks per writer, unique per tenant); the
    // records written before become the chain 'legacy', whose positions are their seqs.
    name: '0015-audit-writer-chains',
    sql: `
CREATE TABLE audit_chains (
  tenant_id  text NOT NULL,
  chain      text NOT NULL,
  size       bigint NOT NULL,
  head       text NOT NULL,
  last_seq   bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, chain)
);
INSERT INTO audit_chains (tenant_id, chain, size, head, last_seq)
  SELECT tenant_id, 'legacy', seq, hash, seq FROM audit_heads WHERE seq > 0;
ALTER TABLE audit_heads DROP COLUMN hash;
ALTER TABLE audit_log ADD COLUMN chain text, ADD COLUMN position bigint;
UPDATE audit_log SET chain = 'legacy', position = seq;
ALTER TABLE audit_log ALTER COLUMN chain SET NOT NULL, ALTER COLUMN position SET NOT NULL;
CREATE UNIQUE INDEX audit_log_chain ON audit_log (tenant_id, chain, position);
`,
  },
  {
    // Signed checkpoints (decision 0202): each tenant's latest, replaced as the trail grows.
    name: '0016-audit-checkpoints',
    sql: `
CREATE TABLE audit_checkpoints (
  tenant_id text PRIMARY KEY,
  at        timestamptz NOT NULL,
  size      bigint NOT NULL,
  root      text NOT NULL,
  kid       text NOT NULL,
  jws       text NOT NULL
);
`,
  },
  {
    // The operations console (decision 0161): a session per sign-in, shared by every gateway process.
    // The platform's rows, as operator keys are (every primary key starts with tenant_id). Only a hash of the session id is stored; the key it was opened with is named by its row, so revoking the
    // key ends its sessions. seen_at moves on each use: a session unused for the idle timeout is over.
    name: '0020-console-sessions',
    sql: `
CREATE TABLE console_sessions (
  tenant_id  text NOT NULL DEFAULT '_platform' CHECK (tenant_id = '_platform'),
  id_hash    text NOT NULL,
  key_id     uuid NOT NULL,
  operator   text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  seen_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id_hash)
);
CREATE INDEX console_sessions_seen ON console_sessions (tenant_id, seen_at);
`,
  },
  {
    // Channel types as data (decision 0240): the allowed types are rows that the gateway writes from its list of
    // channel types at every start, and channels.type refers to them, in place of a CHECK that named two types.
    // The platform's rows, as console sessions are (every primary key starts with tenant_id). A type's own
    // settings: as JSON, and its secret ones sealed under the master key.
    name: '0021-channel-types',
    sql: `
CREATE TABLE channel_types (
  tenant_id text NOT NULL DEFAULT '_platform' CHECK (tenant_id = '_platform'),
  type      text NOT NULL UNIQUE,
  PRIMARY KEY (tenant_id, type)
);
INSERT INTO channel_types (type) VALUES ('webhook'), ('nats');
ALTER TABLE channels DROP CONSTRAINT IF EXISTS channels_type_check;
ALTER TABLE channels ADD CONSTRAINT channels_type_known FOREIGN KEY (type) REFERENCES channel_types (type);
ALTER TABLE channels ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE channels ADD COLUMN settings_sealed text;
`,
  },
  {
    // The W3C trace context of the request that caused an event of record (null when tracing is off): the
    // delivery worker's sends continue that trace and hand it on in the webhook's, NATS's or RabbitMQ's headers.
    name: '0023-trace-context',
    sql: `
ALTER TABLE outbox ADD COLUMN traceparent text;
ALTER TABLE deliveries ADD COLUMN traceparent text;
`,
  },
  {
    // Four eyes (decision 0320): a write a tenant's policy holds waits here, as validated (its secret
    // fields sealed), until enough checkers approve it, one rejects it, its maker cancels it or it expires. Every
    // decision is one conditional UPDATE of its row, so two checkers at once cannot both execute it.
    name: '0024-approvals',
    sql: `
CREATE TABLE approvals (
  tenant_id        text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  id               uuid NOT NULL,
  operation        text NOT NULL,
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'executing', 'executed', 'rejected', 'cancelled', 'expired')),
  maker            text NOT NULL,
  maker_role       text NOT NULL,
  maker_token      text NOT NULL,
  request          jsonb NOT NULL,
  approvers        jsonb NOT NULL,
  approvals_needed integer NOT NULL CHECK (approvals_needed IN (1, 2)),
  approvals        jsonb NOT NULL DEFAULT '[]'::jsonb,
  rejection        jsonb,
  outcome          jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX approvals_status ON approvals (tenant_id, status, id);
CREATE INDEX approvals_due ON approvals (expires_at) WHERE status = 'pending';
-- A held write's 202 names its approval in Location: a retry with the same Idempotency-Key answers it again, header included.
ALTER TABLE idempotency_keys ADD COLUMN location text;
`,
  },
  {
    // Card authorizations from a processor: each one decided by the pipeline,
    // with its trail of steps, and the amounts that follow it (held, cleared, reversed, refunded, credited),
    // in minor units that CHECKs keep from going below zero or above what they derive from.
    name: '0025-authorizations',
    sql: `
CREATE TABLE authorizations (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  id                text NOT NULL,
  card_id           text NOT NULL,
  entity_id         text,
  status            text NOT NULL CHECK (status IN ('APPROVED', 'DECLINED')),
  decline_reason    text,
  decided_by        text NOT NULL,
  amount_minor      bigint NOT NULL CHECK (amount_minor > 0),
  approved_minor    bigint NOT NULL CHECK (approved_minor >= 0 AND approved_minor <= amount_minor),
  held_minor        bigint NOT NULL DEFAULT 0 CHECK (held_minor >= 0),
  cleared_minor     bigint NOT NULL DEFAULT 0 CHECK (cleared_minor >= 0),
  reversed_minor    bigint NOT NULL DEFAULT 0 CHECK (reversed_minor >= 0),
  refunded_minor    bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0),
  credited_minor    bigint NOT NULL DEFAULT 0 CHECK (credited_minor >= 0),
  currency          text NOT NULL,
  merchant          jsonb NOT NULL,
  channel           text NOT NULL,
  network_reference text,
  trail             jsonb NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CHECK (held_minor + cleared_minor + reversed_minor = approved_minor),
  CHECK (refunded_minor + credited_minor <= cleared_minor)
);
CREATE INDEX authorizations_card ON authorizations (tenant_id, card_id, created_at);
CREATE INDEX authorizations_created ON authorizations (tenant_id, created_at);
`,
  },
  {
    // Audit chains are leased, not opened per start (decision 0286): a writer takes a chain no live writer holds
    // and continues it. holder: the writer appending to it; lease_until: after it, another writer may take it
    // over. Chains of earlier starts have no holder and are taken first.
    name: '0026-audit-chain-leases',
    sql: `
ALTER TABLE audit_chains ADD COLUMN holder text, ADD COLUMN lease_until timestamptz;
`,
  },
  {
    // Spend controls as data (decision 0332): rules naming their active and shadow versions, versions never
    // changed, and velocity counters in buckets (a decision reads at most 61 rows of one counter).
    name: '0027-auth-rules',
    sql: `
CREATE TABLE auth_rules (
  tenant_id      text NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
  id             uuid NOT NULL,
  name           text NOT NULL,
  level          text NOT NULL CHECK (level IN ('tenant', 'entity', 'card')),
  target_id      text NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('conditions', 'velocity')),
  active_version integer,
  shadow_version integer,
  latest_version integer NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CHECK ((level = 'tenant') = (target_id = ''))
);
CREATE INDEX auth_rules_target ON auth_rules (tenant_id, level, target_id, id);
CREATE TABLE auth_rule_versions (
  tenant_id  text NOT NULL,
  rule_id    uuid NOT NULL,
  version    integer NOT NULL CHECK (version > 0),
  definition jsonb NOT NULL,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, rule_id, version),
  FOREIGN KEY (tenant_id, rule_id) REFERENCES auth_rules (tenant_id, id) ON DELETE CASCADE
);
CREATE TABLE auth_rule_counters (
  tenant_id    text NOT NULL,
  rule_id      uuid NOT NULL,
  counter      text NOT NULL,
  scope_value  text NOT NULL,
  bucket       bigint NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
  count        integer NOT NULL CHECK (count >= 0),
  PRIMARY KEY (tenant_id, rule_id, counter, scope_value, bucket),
  FOREIGN KEY (tenant_id, rule_id) REFERENCES auth_rules (tenant_id, id) ON DELETE CASCADE
);
`,
  },
  {
    // After the authorization: the amounts changes in flight reserve (of what is held, or of what was cleared), so
    // that two changes admitted together never go beyond the amount, each expiring should its gateway stop mid-call;
    // and the disputes, whose open ones claim what was cleared until they are resolved, once.
    name: '0030-authorization-lifecycle',
    sql: `
CREATE TABLE authorization_reservations (
  tenant_id        text NOT NULL,
  id               text NOT NULL,
  authorization_id text NOT NULL,
  pool             text NOT NULL CHECK (pool IN ('held', 'cleared')),
  amount_minor     bigint NOT NULL CHECK (amount_minor > 0),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, authorization_id) REFERENCES authorizations (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX authorization_reservations_of ON authorization_reservations (tenant_id, authorization_id);
CREATE TABLE disputes (
  tenant_id        text NOT NULL,
  id               text NOT NULL,
  authorization_id text NOT NULL,
  card_id          text NOT NULL,
  entity_id        text NOT NULL,
  amount_minor     bigint NOT NULL CHECK (amount_minor > 0),
  currency         text NOT NULL,
  reason           text NOT NULL,
  note             text,
  status           text NOT NULL CHECK (status IN ('OPEN', 'RESOLVING', 'WON', 'LOST')),
  opened_by        text,
  resolved_by      text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  resolving_since  timestamptz,
  resolved_at      timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, authorization_id) REFERENCES authorizations (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX disputes_authorization ON disputes (tenant_id, authorization_id);
`,
  },
  {
    // Velocity given back (decision 0354): the counter buckets an approved authorization was counted in, and how
    // much of its amount (and whether its count) was given back as reversals and final clearings released it.
    name: '0031-velocity-give-back',
    sql: `
ALTER TABLE authorizations ADD COLUMN velocity jsonb;
ALTER TABLE authorizations ADD COLUMN velocity_returned_minor bigint NOT NULL DEFAULT 0 CHECK (velocity_returned_minor >= 0);
ALTER TABLE authorizations ADD COLUMN velocity_count_returned boolean NOT NULL DEFAULT false;
`,
  },
  {
    // A velocity check and its count in one round trip (decision 0358): the counters' locks in the order given, the
    // windows read after them (a volatile function's statements each see what committed before them), and, when
    // no active limit would be passed, the amount added to each counter's bucket and the buckets that left its
    // window dropped. Returns each counter's window before this authorization, and whether it was counted.
    name: '0032-velocity-count-function',
    sql: `
CREATE FUNCTION cardline_velocity_count(p_tenant text, p_rule uuid[], p_counter text[], p_scope text[], p_bucket bigint[], p_oldest bigint[],
    p_amount bigint, p_limit_amount bigint[], p_limit_count integer[], p_buckets_per_window integer)
  RETURNS TABLE (total_amount bigint, total_count bigint, counted boolean)
  LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  k integer := coalesce(cardinality(p_rule), 0);
  amounts bigint[] := '{}';
  counts bigint[] := '{}';
  a bigint;
  c bigint;
  ok boolean := true;
BEGIN
  FOR i IN 1..k LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('auth-rule-counter|' || p_tenant || '|' || p_rule[i]::text || '|' || p_counter[i] || '|' || p_scope[i], 0));
  END LOOP;
  FOR i IN 1..k LOOP
    SELECT coalesce(sum(x.amount_minor), 0), coalesce(sum(x.count), 0) INTO a, c FROM auth_rule_counters x
     WHERE x.tenant_id = p_tenant AND x.rule_id = p_rule[i] AND x.counter = p_counter[i] AND x.scope_value = p_scope[i] AND x.bucket >= p_oldest[i];
    amounts[i] := a;
    counts[i] := c;
    IF (p_limit_amount[i] IS NOT NULL AND a + p_amount > p_limit_amount[i]) OR (p_limit_count[i] IS NOT NULL AND c + 1 > p_limit_count[i]) THEN
      ok := false;
    END IF;
  END LOOP;
  IF ok THEN
    FOR i IN 1..k LOOP
      INSERT INTO auth_rule_counters AS x (tenant_id, rule_id, counter, scope_value, bucket, amount_minor, count)
        VALUES (p_tenant, p_rule[i], p_counter[i], p_scope[i], p_bucket[i], p_amount, 1)
        ON CONFLICT (tenant_id, rule_id, counter, scope_value, bucket)
        DO UPDATE SET amount_minor = x.amount_minor + EXCLUDED.amount_minor, count = x.count + 1;
      DELETE FROM auth_rule_counters x
       WHERE x.tenant_id = p_tenant AND x.rule_id = p_rule[i] AND x.counter = p_counter[i] AND x.scope_value = p_scope[i] AND x.bucket < p_bucket[i] - p_buckets_per_window;
    END LOOP;
  END IF;
  RETURN QUERY SELECT amounts[j], counts[j], ok FROM generate_series(1, k) AS j;
END
$fn$;
`,
  },
  {
    // The count commits without waiting for the WAL flush, so the counters' locks are held for the function's work
    // alone, and is three statements, not four per counter; old buckets go when a new one starts (decision 0379).
    name: '0033-velocity-count-async-commit',
    sql: `
CREATE OR REPLACE FUNCTION cardline_velocity_count(p_tenant text, p_rule uuid[], p_counter text[], p_scope text[], p_bucket bigint[], p_oldest bigint[],
    p_amount bigint, p_limit_amount bigint[], p_limit_count integer[], p_buckets_per_window integer)
  RETURNS TABLE (total_amount bigint, total_count bigint, counted boolean)
  LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
  -- A generic plan: planning the statement below for each call's values cost twice its run.
  PERFORM set_config('synchronous_commit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('auth-rule-counter|' || p_tenant || '|' || u.r::text || '|' || u.c || '|' || u.s, 0))
     FROM unnest(p_rule, p_counter, p_scope) AS u(r, c, s);
  RETURN QUERY
  WITH w AS (
    SELECT u.i, u.r, u.c, u.s, u.b, t.a, t.n, (u.la IS NULL OR t.a + p_amount <= u.la) AND (u.lc IS NULL OR t.n + 1 <= u.lc) AS fits
      FROM unnest(p_rule, p_counter, p_scope, p_bucket, p_oldest, p_limit_amount, p_limit_count) WITH ORDINALITY AS u(r, c, s, b, o, la, lc, i)
      CROSS JOIN LATERAL (
        SELECT coalesce(sum(x.amount_minor), 0)::bigint AS a, coalesce(sum(x.count), 0)::bigint AS n FROM auth_rule_counters x
         WHERE x.tenant_id = p_tenant AND x.rule_id = u.r AND x.counter = u.c AND x.scope_value = u.s AND x.bucket >= u.o
      ) t
  ),
  verdict AS (SELECT coalesce(bool_and(w.fits), true) AS ok FROM w),
  added AS (
    INSERT INTO auth_rule_counters AS x (tenant_id, rule_id, counter, scope_value, bucket, amount_minor, count)
    SELECT p_tenant, w.r, w.c, w.s, w.b, p_amount, 1 FROM w WHERE (SELECT ok FROM verdict)
    ON CONFLICT (tenant_id, rule_id, counter, scope_value, bucket)
    DO UPDATE SET amount_minor = x.amount_minor + EXCLUDED.amount_minor, count = x.count + 1
    RETURNING x.rule_id, x.counter, x.scope_value, x.bucket, x.xmax = 0 AS fresh
  ),
  pruned AS (
    DELETE FROM auth_rule_counters x USING added d
     WHERE d.fresh AND x.tenant_id = p_tenant AND x.rule_id = d.rule_id AND x.counter = d.counter AND x.scope_value = d.scope_value
       AND x.bucket < d.bucket - p_buckets_per_window
  )
  SELECT w.a, w.n, (SELECT ok FROM verdict) FROM w ORDER BY w.i;
END
$fn$;
`,
  },
  {
    // Velocity grants (decision 0398): the count may also reserve a share of a counter's room for this process to
    // spend without a round trip, and gives back what the process did not spend of its last one, first.
    name: '0034-velocity-grants',
    sql: `
CREATE FUNCTION cardline_velocity_take(p_tenant text, p_rule uuid[], p_counter text[], p_scope text[], p_bucket bigint[], p_oldest bigint[],
    p_amount bigint, p_limit_amount bigint[], p_limit_count integer[], p_buckets_per_window integer,
    p_grant boolean[], p_grant_count integer, p_grant_share integer,
    p_back_bucket bigint[], p_back_amount bigint[], p_back_count integer[])
  RETURNS TABLE (total_amount bigint, total_count bigint, counted boolean, grant_amount bigint, grant_count integer)
  LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('auth-rule-counter|' || p_tenant || '|' || u.r::text || '|' || u.c || '|' || u.s, 0))
     FROM unnest(p_rule, p_counter, p_scope) AS u(r, c, s);
  UPDATE auth_rule_counters x SET amount_minor = GREATEST(x.amount_minor - u.a, 0), count = GREATEST(x.count - u.n, 0)
    FROM unnest(p_rule, p_counter, p_scope, p_back_bucket, p_back_amount, p_back_count) AS u(r, c, s, b, a, n)
   WHERE u.b IS NOT NULL AND x.tenant_id = p_tenant AND x.rule_id = u.r AND x.counter = u.c AND x.scope_value = u.s AND x.bucket = u.b;
  RETURN QUERY
  WITH w AS (
    SELECT u.i, u.r, u.c, u.s, u.b, t.a, t.n, (u.la IS NULL OR t.a + p_amount <= u.la) AND (u.lc IS NULL OR t.n + 1 <= u.lc) AS fits,
           -- A grant: up to p_grant_count more of this amount, at most 1/p_grant_share of the room left; none when small.
           CASE WHEN u.g THEN LEAST(p_grant_count::bigint * p_amount, coalesce((u.la - t.a - p_amount) / p_grant_share, p_grant_count::bigint * p_amount)) ELSE 0 END AS ga,
           CASE WHEN u.g THEN LEAST(p_grant_count::bigint, coalesce((u.lc - t.n - 1) / p_grant_share, p_grant_count::bigint)) ELSE 0 END AS gn
      FROM unnest(p_rule, p_counter, p_scope, p_bucket, p_oldest, p_limit_amount, p_limit_count, p_grant) WITH ORDINALITY AS u(r, c, s, b, o, la, lc, g, i)
      CROSS JOIN LATERAL (
        SELECT coalesce(sum(x.amount_minor), 0)::bigint AS a, coalesce(sum(x.count), 0)::bigint AS n FROM auth_rule_counters x
         WHERE x.tenant_id = p_tenant AND x.rule_id = u.r AND x.counter = u.c AND x.scope_value = u.s AND x.bucket >= u.o
      ) t
  ),
  verdict AS (SELECT coalesce(bool_and(w.fits), true) AS ok FROM w),
  g AS (
    SELECT w.*, CASE WHEN (SELECT ok FROM verdict) AND w.gn >= p_grant_count / 8 AND w.ga >= (p_grant_count / 8) * p_amount THEN true ELSE false END AS granted FROM w
  ),
  added AS (
    INSERT INTO auth_rule_counters AS x (tenant_id, rule_id, counter, scope_value, bucket, amount_minor, count)
    SELECT p_tenant, g.r, g.c, g.s, g.b, p_amount + CASE WHEN g.granted THEN g.ga ELSE 0 END, 1 + CASE WHEN g.granted THEN g.gn ELSE 0 END
      FROM g WHERE (SELECT ok FROM verdict)
    ON CONFLICT (tenant_id, rule_id, counter, scope_value, bucket)
    DO UPDATE SET amount_minor = x.amount_minor + EXCLUDED.amount_minor, count = x.count + EXCLUDED.count
    RETURNING x.rule_id, x.counter, x.scope_value, x.bucket, x.xmax = 0 AS fresh
  ),
  pruned AS (
    DELETE FROM auth_rule_counters x USING added d
     WHERE d.fresh AND x.tenant_id = p_tenant AND x.rule_id = d.rule_id AND x.counter = d.counter AND x.scope_value = d.scope_value
       AND x.bucket < d.bucket - p_buckets_per_window
  )
  SELECT g.a, g.n, (SELECT ok FROM verdict), CASE WHEN g.granted THEN g.ga ELSE 0 END, CASE WHEN g.granted THEN g.gn::integer ELSE 0 END FROM g ORDER BY g.i;
END
$fn$;
`,
  },
  {
    // Velocity counts grouped (decision 0440): the authorizations of a tenant waiting while its previous call runs
    // are counted by one call. Every counter of the group is locked first, in the order given (the same global
    // order as one authorization's), then each authorization is decided and counted in turn, seeing those before it.
    name: '0035-velocity-take-many',
    sql: `
CREATE FUNCTION cardline_velocity_take_many(p_tenant text, p_lock_rule uuid[], p_lock_counter text[], p_lock_scope text[],
    p_auth integer[], p_rule uuid[], p_counter text[], p_scope text[], p_bucket bigint[], p_oldest bigint[],
    p_amount bigint[], p_limit_amount bigint[], p_limit_count integer[], p_buckets_per_window integer,
    p_grant boolean[], p_grant_count integer, p_grant_share integer,
    p_back_bucket bigint[], p_back_amount bigint[], p_back_count integer[])
  RETURNS TABLE (auth integer, total_amount bigint, total_count bigint, counted boolean, grant_amount bigint, grant_count integer)
  LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  k integer := coalesce(p_auth[cardinality(p_auth)], 0);
  lo integer := 1;
  hi integer;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('auth-rule-counter|' || p_tenant || '|' || u.r::text || '|' || u.c || '|' || u.s, 0))
     FROM unnest(p_lock_rule, p_lock_counter, p_lock_scope) AS u(r, c, s);
  UPDATE auth_rule_counters x SET amount_minor = GREATEST(x.amount_minor - u.a, 0), count = GREATEST(x.count - u.n, 0)
    FROM (SELECT v.r, v.c, v.s, v.b, sum(v.a)::bigint AS a, sum(v.n)::integer AS n
            FROM unnest(p_rule, p_counter, p_scope, p_back_bucket, p_back_amount, p_back_count) AS v(r, c, s, b, a, n)
           WHERE v.b IS NOT NULL GROUP BY v.r, v.c, v.s, v.b) u
   WHERE x.tenant_id = p_tenant AND x.rule_id = u.r AND x.counter = u.c AND x.scope_value = u.s AND x.bucket = u.b;
  -- In one statement when each authorization fits with every one before it counted (what the loop below would do),
  -- and each counter is counted in one bucket; a counter's grant is sized after the whole group.
  RETURN QUERY
  WITH u AS (
    SELECT * FROM unnest(p_auth, p_rule, p_counter, p_scope, p_bucket, p_oldest, p_amount, p_limit_amount, p_limit_count, p_grant)
      WITH ORDINALITY AS u(q, r, c, s, b, o, p, la, lc, g, i)
  ),
  t AS (
    SELECT d.r, d.c, d.s, d.b, d.o, d.rows, x.a, x.n FROM (SELECT r, c, s, min(b) AS b, min(o) AS o, count(DISTINCT b) AS rows FROM u GROUP BY r, c, s) d
     CROSS JOIN LATERAL (
       SELECT coalesce(sum(x.amount_minor), 0)::bigint AS a, coalesce(sum(x.count), 0)::bigint AS n FROM auth_rule_counters x
        WHERE x.tenant_id = p_tenant AND x.rule_id = d.r AND x.counter = d.c AND x.scope_value = d.s AND x.bucket >= d.o
     ) x
  ),
  w AS (
    SELECT u.*, (t.a + coalesce(sum(u.p) OVER before, 0))::bigint AS a, t.n + count(*) OVER before AS n,
           (t.a + sum(u.p) OVER whole)::bigint AS after_a, t.n + count(*) OVER whole AS after_n, t.rows
      FROM u JOIN t ON t.r = u.r AND t.c = u.c AND t.s = u.s
    WINDOW before AS (PARTITION BY u.r, u.c, u.s ORDER BY u.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
           whole AS (PARTITION BY u.r, u.c, u.s)
  ),
  verdict AS (
    SELECT coalesce(bool_and(w.rows = 1 AND (w.la IS NULL OR w.a + w.p <= w.la) AND (w.lc IS NULL OR w.n + 1 <= w.lc)), true) AS ok FROM w
  ),
  g AS (
    SELECT w.*, CASE WHEN w.g THEN LEAST(p_grant_count::bigint * w.p, coalesce((w.la - w.after_a) / p_grant_share, p_grant_count::bigint * w.p)) ELSE 0 END AS ga,
           CASE WHEN w.g THEN LEAST(p_grant_count::bigint, coalesce((w.lc - w.after_n) / p_grant_share, p_grant_count::bigint)) ELSE 0 END AS gn
      FROM w WHERE (SELECT ok FROM verdict)
  ),
  granted AS (
    SELECT g.*, g.gn >= p_grant_count / 8 AND g.ga >= (p_grant_count / 8) * g.p AS yes FROM g
  ),
  added AS (
    INSERT INTO auth_rule_counters AS x (tenant_id, rule_id, counter, scope_value, bucket, amount_minor, count)
    SELECT p_tenant, r, c, s, b, sum(p + CASE WHEN yes THEN ga ELSE 0 END)::bigint, sum(1 + CASE WHEN yes THEN gn ELSE 0 END)::integer
      FROM granted GROUP BY r, c, s, b
    ON CONFLICT (tenant_id, rule_id, counter, scope_value, bucket)
    DO UPDATE SET amount_minor = x.amount_minor + EXCLUDED.amount_minor, count = x.count + EXCLUDED.count
    RETURNING x.rule_id, x.counter, x.scope_value, x.bucket, x.xmax = 0 AS fresh
  ),
  pruned AS (
    DELETE FROM auth_rule_counters x USING added d
     WHERE d.fresh AND x.tenant_id = p_tenant AND x.rule_id = d.rule_id AND x.counter = d.counter AND x.scope_value = d.scope_value
       AND x.bucket < d.bucket - p_buckets_per_window
  )
  SELECT q::integer, a, n, true, CASE WHEN yes THEN ga ELSE 0 END, CASE WHEN yes THEN gn::integer ELSE 0 END FROM granted ORDER BY i;
  IF FOUND THEN
    RETURN;
  END IF;
  FOR j IN 1..k LOOP
    hi := lo;
    WHILE hi < cardinality(p_auth) AND p_auth[hi + 1] = j LOOP
      hi := hi + 1;
    END LOOP;
    RETURN QUERY
    WITH w AS (
      SELECT u.i, u.r, u.c, u.s, u.b, u.p, t.a, t.n, (u.la IS NULL OR t.a + u.p <= u.la) AND (u.lc IS NULL OR t.n + 1 <= u.lc) AS fits,
             CASE WHEN u.g THEN LEAST(p_grant_count::bigint * u.p, coalesce((u.la - t.a - u.p) / p_grant_share, p_grant_count::bigint * u.p)) ELSE 0 END AS ga,
             CASE WHEN u.g THEN LEAST(p_grant_count::bigint, coalesce((u.lc - t.n - 1) / p_grant_share, p_grant_count::bigint)) ELSE 0 END AS gn
        FROM unnest(p_rule[lo:hi], p_counter[lo:hi], p_scope[lo:hi], p_bucket[lo:hi], p_oldest[lo:hi], p_amount[lo:hi],
                    p_limit_amount[lo:hi], p_limit_count[lo:hi], p_grant[lo:hi]) WITH ORDINALITY AS u(r, c, s, b, o, p, la, lc, g, i)
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(x.amount_minor), 0)::bigint AS a, coalesce(sum(x.count), 0)::bigint AS n FROM auth_rule_counters x
           WHERE x.tenant_id = p_tenant AND x.rule_id = u.r AND x.counter = u.c AND x.scope_value = u.s AND x.bucket >= u.o
        ) t
    ),
    verdict AS (SELECT coalesce(bool_and(w.fits), true) AS ok FROM w),
    g AS (
      SELECT w.*, (SELECT ok FROM verdict) AND w.gn >= p_grant_count / 8 AND w.ga >= (p_grant_count / 8) * w.p AS granted FROM w
    ),
    added AS (
      INSERT INTO auth_rule_counters AS x (tenant_id, rule_id, counter, scope_value, bucket, amount_minor, count)
      SELECT p_tenant, g.r, g.c, g.s, g.b, g.p + CASE WHEN g.granted THEN g.ga ELSE 0 END, 1 + CASE WHEN g.granted THEN g.gn ELSE 0 END
        FROM g WHERE (SELECT ok FROM verdict)
      ON CONFLICT (tenant_id, rule_id, counter, scope_value, bucket)
      DO UPDATE SET amount_minor = x.amount_minor + EXCLUDED.amount_minor, count = x.count + EXCLUDED.count
      RETURNING x.rule_id, x.counter, x.scope_value, x.bucket, x.xmax = 0 AS fresh
    ),
    pruned AS (
      DELETE FROM auth_rule_counters x USING added d
       WHERE d.fresh AND x.tenant_id = p_tenant AND x.rule_id = d.rule_id AND x.counter = d.counter AND x.scope_value = d.scope_value
         AND x.bucket < d.bucket - p_buckets_per_window
    )
    SELECT j, g.a, g.n, (SELECT ok FROM verdict), CASE WHEN g.granted THEN g.ga ELSE 0 END, CASE WHEN g.granted THEN g.gn::integer ELSE 0 END
      FROM g ORDER BY g.i;
    lo := hi + 1;
  END LOOP;
END
$fn$;
`,
  },
  {
    // An authorization's row costs less to write (decision 0452): no foreign key to tenants (a tenant is never
    // deleted; audit_log and outbox have none either). A tenant purge, should one be built, deletes its
    // authorizations itself.
    name: '0036-authorization-row-lighter',
    sql: `
ALTER TABLE authorizations DROP CONSTRAINT authorizations_tenant_id_fkey;
`,
  },
];
