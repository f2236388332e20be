// The process: configuration, store, demo seeding, listen, and graceful shutdown on SIGTERM.
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { buildApp } from './app.js';
import { reportReady, runPrimary, workerIndex } from './cluster.js';
import { openStore, resolveMasterKey, StartupError } from './bootstrap.js';
import { ConfigError, isLoopback, loadConfig } from './config.js';
import { ListenError, checkPorts, listenOn, type ListenerSpec } from './listen.js';
import { buildManagementApp } from './management/app.js';
import { logDestination, loggerOptions, prettyLogStream, wantsPrettyLogs } from './logging.js';
import { resetDemoPasswords, seedDemo, seedDemoOperatorKey, type DemoOperatorKeySeed } from './services/tenancy/onboarding.js';
import { closeOnSignals } from './shutdown.js';
import { startTracing } from './telemetry/index.js';

/** What the start is doing, for the message of a start that fails or overruns (decision 0101). */
let step = 'reading the configuration';

/** Ends a start that has not finished within CARDLINE_START_TIMEOUT_MS, naming the step it is stuck at. */
function startDeadline(ms: number): () => void {
  if (ms === 0) return () => undefined;
  const timer = setTimeout(() => {
    process.stderr.write(`Cardline did not start within ${ms / 1000} s (CARDLINE_START_TIMEOUT_MS): still ${step}.\n`);
    process.exit(1);
  }, ms);
  return () => clearTimeout(timer);
}

async function main(): Promise<void> {
  const demoFlag = process.argv.includes('--demo');
  const config = loadConfig(process.env, demoFlag ? { demo: true } : {});
  if (config.workers > 1 && cluster.isPrimary) {
    // CARDLINE_WORKERS (decision 0206): this process only forks, balances and drains the gateway processes.
    process.exit(await runPrimary({ workers: config.workers, shutdownGraceMs: config.shutdownGraceMs }));
  }
  // Before the store and the loggers are made: they are traced (and name their spans) only if tracing is on.
  step = 'starting OpenTelemetry tracing (OTEL_*)';
  await startTracing(process.env);
  // Under CARDLINE_WORKERS, the first worker seeds the demo and says so; the others start on what it made.
  const firstProcess = workerIndex() <= 1;
  const started = startDeadline(config.startTimeoutMs);
  const publicApi: ListenerSpec = { name: 'public API', host: config.host, port: config.port, portVariable: 'PORT', hostVariable: 'HOST' };
  const managementListener: ListenerSpec = {
    name: 'management listener',
    host: config.adminHost,
    port: config.adminPort,
    portVariable: 'CARDLINE_ADMIN_PORT',
    hostVariable: 'CARDLINE_ADMIN_HOST',
  };
  if (firstProcess) {
    // Before anything is stored or printed once (the demo's password and operator key).
    step = 'checking that the ports are free';
    await checkPorts([publicApi, managementListener]);
  }
  step = 'reading the master key (CARDLINE_MASTER_KEY)';
  const masterKey = resolveMasterKey(config, { allowGenerate: config.demo });
  step = config.databaseUrl ? 'opening the store (DATABASE_URL)' : `opening the embedded store in ${config.dataDir}`;
  const db = await openStore(config, { thread: config.storeThread });
  step = "starting the gateway's services (store migrations, master key check, connectors, HSM, Redis when configured)";
  // Read on a terminal, the demo's log is pretty lines; piped or in production it stays JSON.
  const logger = pino(loggerOptions(config.logLevel), wantsPrettyLogs(config.demo, process.stdout.isTTY) ? await prettyLogStream() : logDestination());
  const app = await buildApp({ config, db, masterKey, logger });

  if (config.demo && firstProcess) {
    step = 'seeding the demo tenants';
    const generated = !config.demoPassword;
    const password = config.demoPassword ?? randomBytes(12).toString('base64url');
    const seeded = await seedDemo(app.cardline, password);
    if (seeded) {
      // Printed once, to the terminal, never to the log.
      process.stdout.write(
        `\nDemo tenants 'demo' and 'demo-b' created with users admin, ops, integration, viewer.\n` +
          (generated ? `Their password (shown only now): ${password}\n\n` : `Their password is CARDLINE_DEMO_PASSWORD.\n\n`),
      );
    } else if (!generated) {
      // A restart with CARDLINE_DEMO_PASSWORD must log in with it, whatever the store was seeded with.
      const reset = await resetDemoPasswords(app.cardline, password);
      process.stdout.write(
        reset.length
          ? `\nDemo tenants already exist (${reset.join(', ')}): the password of users admin, ops, integration, viewer is now CARDLINE_DEMO_PASSWORD.\n\n`
          : `\nThe store already has tenants but no demo tenant: nothing seeded, no password changed.\n\n`,
      );
    } else {
      process.stdout.write(
        `\nDemo tenants already exist: their users keep the password they were given when the store was seeded ` +
          `(printed then). To choose it, start again with CARDLINE_DEMO_PASSWORD='…' npm run demo.\n\n`,
      );
    }
  }

  if (config.demo && firstProcess && !isLoopback(config.host)) {
    // Said on the terminal, where the person who started the demo looks.
    process.stderr.write(
      `\nWarning: the demo listens on ${config.host}, reachable from the network unless something in front restricts it ` +
        `(a container port published on 127.0.0.1 only). Its users' password and its PIN keys are published test values; ` +
        `unset HOST (loopback) unless this machine is isolated.\n\n`,
    );
  }

  step = 'starting the management API';
  const management = await buildManagementApp({ services: app.cardline, config, logger: app.log });
  if (config.demo && firstProcess) {
    const seeded = await seedDemoOperatorKey(app.cardline.operatorKeys, config.demoOperatorKey);
    process.stdout.write(demoOperatorKeyMessage(seeded, config.demoOperatorKey !== undefined));
  }

  // The management listener closes first: it runs on the gateway's services.
  closeOnSignals([management, app], config.shutdownGraceMs);
  // The management listener first: once the public API answers ready, both listen.
  step = `listening on ${config.adminHost}:${config.adminPort} (CARDLINE_ADMIN_PORT, CARDLINE_ADMIN_HOST)`;
  await listenOn(management, managementListener, [publicApi]);
  step = `listening on ${config.host}:${config.port} (PORT, HOST)`;
  await listenOn(app, publicApi, [managementListener]);
  started();
  // The start's lines out before readiness is reported (they wait for 4 kB or 100 ms otherwise).
  logger.flush();
  reportReady();
  if (config.demo && firstProcess) process.stdout.write(demoBanner(publicApi, managementListener));
}

/** An address a browser on this machine opens: a wildcard host is reached at localhost. */
const originOf = (spec: ListenerSpec): string => {
  const host = spec.host === '0.0.0.0' || spec.host === '::' ? 'localhost' : spec.host.includes(':') ? `[${spec.host}]` : spec.host;
  return `http://${host}:${spec.port}`;
};

/** The demo's first screen: which address is which, and where the console and the references are. */
function demoBanner(publicApi: ListenerSpec, management: ListenerSpec): string {
  const api = originOf(publicApi);
  const admin = originOf(management);
  return (
    `\nCardline demo ready.\n` +
    `  Public API (the banks' calls, tenant header and token)   ${api}\n` +
    `    API reference                                          ${api}/docs\n` +
    `  Management listener (operators, operator key)            ${admin}\n` +
    `    Console                                                ${admin}/console/\n` +
    `    Management API reference                               ${admin}/docs\n\n`
  );
}

/** What the terminal is told of the demo's operator key; a generated key is printed once, never logged. */
function demoOperatorKeyMessage(seeded: DemoOperatorKeySeed, chosen: boolean): string {
  switch (seeded.outcome) {
    case 'created':
      return seeded.key ? `Demo operator key 'demo' (shown only now): ${seeded.key}\n\n` : `Demo operator key 'demo' is CARDLINE_DEMO_OPERATOR_KEY.\n\n`;
    case 'kept':
      return chosen ? `Demo operator key 'demo' is CARDLINE_DEMO_OPERATOR_KEY.\n\n` : '';
    case 'revoked':
      return chosen
        ? `CARDLINE_DEMO_OPERATOR_KEY was revoked and stays revoked: the management API refuses it. ` +
            `Choose another value to make it the demo's operator key again.\n\n`
        : `The demo operator key 'demo' was revoked and stays revoked; no new one is made. ` +
            `Set CARDLINE_DEMO_OPERATOR_KEY to a new value to have one.\n\n`;
    case 'taken':
      return `CARDLINE_DEMO_OPERATOR_KEY is another operator key's: it is left as it is, and no 'demo' key is made.\n\n`;
  }
}

main().catch((err: unknown) => {
  // A configuration, start-up or listening error is already a sentence for the operator; anything else gets its first line.
  const expected = err instanceof ConfigError || err instanceof StartupError || err instanceof ListenError;
  const reason = expected ? err.message : String((err as Error)?.message ?? err).split('\n')[0];
  process.stderr.write(`Cardline failed to start while ${step}: ${reason}\n`);
  process.exit(1);
});
