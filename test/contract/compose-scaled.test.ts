// compose.scaled.yaml and deploy/haproxy.cfg, read as files (issue 21 point 4; no Docker engine is needed): the
// gateway's replicas each run CARDLINE_WORKERS processes on PostgreSQL, Redis and NATS, behind HAProxy, which
// checks their readiness and is the only proxy they trust. Where HAProxy is installed, its own check of the file.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  deploy?: { replicas?: number };
  networks?: { default?: { ipv4_address?: string } };
  depends_on?: Record<string, { condition: string }>;
}
const compose = parse(read('compose.scaled.yaml')) as {
  services: Record<string, Service>;
  networks: { default: { ipam: { config: { subnet: string }[] } } };
  volumes: Record<string, unknown>;
};
const gateway = compose.services.gateway!;
const haproxy = compose.services.haproxy!;
/** `${X:-default}` and `${X:?error}` as compose reads them, with the master key exported and nothing else. */
const interpolate = (value: string) =>
  value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op: string | undefined, word: string) =>
    name === 'CARDLINE_MASTER_KEY' ? 'A'.repeat(43) : op === '-' ? word : '',
  );
const env = Object.fromEntries(Object.entries(gateway.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
const haproxyCfg = read('deploy/haproxy.cfg');
const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;

describe('compose.scaled.yaml', () => {
  it('runs replicas of the gateway, each with several processes, on PostgreSQL, Redis and NATS', () => {
    expect(gateway.deploy?.replicas).toBe(2);
    expect(env.CARDLINE_WORKERS).toBe('2');
    expect(env.DATABASE_URL).toBe('postgres://cardline:cardline@postgres:5432/cardline');
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    expect(env.NATS_URL).toBe('nats://nats:4222');
    for (const companion of ['postgres', 'redis', 'nats', 'mock-core']) expect(compose.services[companion], companion).toBeDefined();
    // The configuration the replicas start with is one the gateway accepts (several workers need PostgreSQL).
    const config = loadConfig(env);
    expect(config.workers).toBe(2);
    expect(config.databaseUrl).toBeDefined();
  });

  it('publishes HAProxy alone, on loopback, and the gateway trusts no other proxy', () => {
    expect(gateway.ports).toBeUndefined();
    expect(haproxy.image).toMatch(/^haproxy:\d/);
    expect(haproxy.ports).toEqual(['127.0.0.1:8080:8080']);
    expect(haproxy.volumes).toEqual(['./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    const address = haproxy.networks?.default?.ipv4_address;
    expect(env.TRUST_PROXY).toBe(address);
    expect(compose.networks.default.ipam.config[0]!.subnet).toBe('172.30.0.0/24');
    expect(address).toMatch(/^172\.30\.0\.\d+$/);
    expect(loadConfig(env).trustProxy).toEqual([address]);
  });

  it("every volume used is declared, and PostgreSQL has connections for every process's pool", () => {
    const used = Object.values(compose.services).flatMap((s) => (s.volumes ?? []).map((v) => v.split(':')[0]!)).filter((v) => !v.startsWith('./'));
    expect(used.sort()).toEqual(Object.keys(compose.volumes).sort());
    const max = Number((compose.services.postgres as { command: string[] }).command.at(-1)!.split('=')[1]);
    expect(max).toBeGreaterThanOrEqual(2 * 2 * 10 + 10);
  });
});

describe('deploy/haproxy.cfg', () => {
  it("balances over the gateway service's replicas, found through Docker's DNS, by their readiness", () => {
    expect(haproxyCfg).toMatch(/^\s*bind :8080$/m);
    expect(haproxyCfg).toMatch(/^\s*nameserver dns 127\.0\.0\.11:53$/m);
    expect(haproxyCfg).toMatch(/^\s*option httpchk GET \/health\/ready$/m);
    expect(haproxyCfg).toMatch(/^\s*http-check expect status 200$/m);
    expect(haproxyCfg).toMatch(/^\s*server-template gateway \d+ gateway:8080 check$/m);
    expect(haproxyCfg).toMatch(/^\s*option forwardfor$/m);
  });

  it.skipIf(!haproxyInstalled)("passes HAProxy's own check (haproxy -c; skipped where HAProxy is not installed)", () => {
    expect(existsSync(`${ROOT}deploy/haproxy.cfg`)).toBe(true);
    expect(execFileSync('haproxy', ['-c', '-f', `${ROOT}deploy/haproxy.cfg`], { encoding: 'utf8' })).toContain('Configuration file is valid');
  });
});
