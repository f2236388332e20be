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
];
