// The Docker image and compose.yaml, read as files (issue 20, point 10; no Docker engine is needed): the
// management listener reachable from the host's loopback only, NATS in compose, the example plugin in the image,
// health checks with node. `docker compose config` checks the same files where Docker runs (docs/operating.md).
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
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}
/** Compose's interpolation of `${X}`, `${X:-default}` and `${X:?error}` with the variables of `env`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op: string | undefined, word: string) => {
    const set = env[name];
    if (set) return set;
    if (op === '?') throw new Error(`compose.yaml needs ${name}: ${word}`);
    return op === '-' ? word : '';
  });
}
/** What a shell exports before `docker compose up` (docs/operating.md): the master key alone. */
const SHELL = { CARDLINE_MASTER_KEY: 'A'.repeat(43) };
const environment = (service: Service) =>
  Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), SHELL)]));

const compose = parse(read('compose.yaml')) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const gateway = compose.services.gateway!;

/** The Dockerfile's instructions, continuation lines joined, comments dropped, by stage (FROM starts one). */
function dockerfileStages(text: string): { instruction: string; args: string }[][] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const stages: { instruction: string; args: string }[][] = [];
  for (const line of lines) {
    const [, instruction = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (instruction.toUpperCase() === 'FROM') stages.push([]);
    stages.at(-1)?.push({ instruction: instruction.toUpperCase(), args: args.replace(/\s+/g, ' ') });
  }
  return stages;
}
const stages = dockerfileStages(read('Dockerfile'));
const [buildStage, finalStage] = [stages[0]!, stages.at(-1)!];
const args = (stage: typeof finalStage, instruction: string) => stage.filter((i) => i.instruction === instruction).map((i) => i.args);
/** ENV key=value pairs of a stage. */
const imageEnv = Object.fromEntries(args(finalStage, 'ENV').flatMap((a) => a.split(' ').map((kv) => kv.split('=') as [string, string])));

describe('the image (Dockerfile)', () => {
  it('has two stages: a build and the image that runs', () => {
    expect(stages).toHaveLength(2);
  });

  it('both listeners on all interfaces inside the container, each on its port, both exposed', () => {
    expect(imageEnv).toMatchObject({ HOST: '0.0.0.0', PORT: '8080', CARDLINE_ADMIN_HOST: '0.0.0.0', CARDLINE_ADMIN_PORT: '8081' });
    expect(args(finalStage, 'EXPOSE').join(' ').split(' ').sort()).toEqual(['8080', '8081']);
    // The variables are the gateway's own: its configuration reads them as the image sets them.
    const config = loadConfig({ ...imageEnv, CARDLINE_MASTER_KEY: 'A'.repeat(43) });
    expect([config.host, config.port, config.adminHost, config.adminPort]).toEqual(['0.0.0.0', 8080, '0.0.0.0', 8081]);
  });

  it('a HEALTHCHECK with node (the image has no curl) on the readiness probe', () => {
    const [healthcheck, ...more] = args(finalStage, 'HEALTHCHECK');
    expect(more).toEqual([]);
    expect(healthcheck).toMatch(/CMD node -e "fetch\('http:\/\/127\.0\.0\.1:'\+process\.env\.PORT\+'\/health\/ready'\)/);
    expect(read('Dockerfile')).not.toMatch(/\b(curl|wget)\b/);
  });

  it('the example plugin (examples/acme-core) is compiled into the image and found at ./examples from /app', () => {
    expect(existsSync(`${ROOT}examples/acme-core/index.ts`)).toBe(true);
    expect(args(buildStage, 'COPY')).toContain('examples/acme-core ./examples/acme-core');
    expect((JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include).toContain('examples/acme-core');
    expect(args(finalStage, 'COPY')).toContain('--from=build /app/dist ./dist');
    expect(args(finalStage, 'WORKDIR')).toEqual(['/app']);
    expect(args(finalStage, 'RUN').join(' ')).toContain('ln -s /app/dist/examples /app/examples');
    // The build context has it: .dockerignore leaves examples/ out but for the plugin, after that line.
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignore.indexOf('!examples/acme-core')).toBeGreaterThan(ignore.indexOf('examples'));
    expect(ignore.indexOf('examples')).toBeGreaterThanOrEqual(0);
  });
});

describe('compose.yaml', () => {
  it('publishes on this machine\'s loopback only: the public API and the management listener, nothing else', () => {
    expect(gateway.ports).toEqual(['127.0.0.1:8080:8080', '127.0.0.1:8081:8081']);
    for (const [name, service] of Object.entries(compose.services)) {
      if (name !== 'gateway') expect([name, service.ports]).toEqual([name, undefined]);
    }
  });

  it('the gateway\'s listeners match what is published, the management one on all of the container\'s interfaces', () => {
    const config = loadConfig({ ...imageEnv, ...environment(gateway) });
    expect([config.host, config.port, config.adminHost, config.adminPort]).toEqual(['0.0.0.0', 8080, '0.0.0.0', 8081]);
    const published = gateway.ports!.map((p) => Number(p.split(':')[2]));
    expect(published).toEqual([config.port, config.adminPort]);
  });

  it('NATS with JetStream, on the compose network only, and the gateway pointed at it', () => {
    const nats = compose.services.nats!;
    expect(nats.image).toMatch(/^nats:2(\.|$)/);
    expect(nats.command).toContain('-js');
    expect(nats.ports).toBeUndefined();
    expect(gateway.environment!.NATS_URL).toBe('nats://nats:4222');
    expect(loadConfig({ ...imageEnv, ...environment(gateway) }).notify.natsUrl).toBe('nats://nats:4222');
    expect(gateway.depends_on?.nats).toEqual({ condition: 'service_started' });
  });

  it('health checks with node on the gateway and the mock core, on the ports they listen on', () => {
    expect(gateway.healthcheck!.test).toEqual([
      'CMD',
      'node',
      '-e',
      "fetch('http://127.0.0.1:8080/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))",
    ]);
    const mockCore = compose.services['mock-core']!;
    expect(mockCore.environment!.MOCK_CORE_PORT).toBe('9090');
    expect(mockCore.healthcheck!.test.slice(0, 2)).toEqual(['CMD', 'node']);
    expect(mockCore.healthcheck!.test[3]).toContain("fetch('http://127.0.0.1:9090/openapi.json')");
    for (const name of ['postgres', 'redis', 'mock-core']) expect([name, gateway.depends_on?.[name]]).toEqual([name, { condition: 'service_healthy' }]);
  });

  it('without CARDLINE_MASTER_KEY exported, compose refuses to start, naming it', () => {
    expect(() => interpolate(String(gateway.environment!.CARDLINE_MASTER_KEY), {})).toThrow(/CARDLINE_MASTER_KEY/);
  });

  it('every named volume is declared', () => {
    const used = Object.values(compose.services).flatMap((s) => ((s as { volumes?: string[] }).volumes ?? []).map((v) => v.split(':')[0]!));
    expect(used.sort()).toEqual(Object.keys(compose.volumes).sort());
  });
});
