// The mock core process: `npm run mock-core -- --port 9090` (or MOCK_CORE_PORT=9090). Listens on loopback, closes gracefully on SIGTERM/SIGINT.
import { coreProtocolOpenApiText } from '../../connectors/rest/protocol-document.js';
import { MockCoreConfigError, USAGE, parseMockCoreArgs } from './config.js';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { closeOnSignals } from '../shutdown.js';
import { ListenError, listenOn } from '../listen.js';

async function main(): Promise<void> {
  const config = parseMockCoreArgs(process.argv.slice(2), process.env);
  if (config.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (config.printOpenApi) {
    process.stdout.write(coreProtocolOpenApiText());
    return;
  }

  const app = buildMockCore({
    dataDir: config.dataDir,
    fixtures: config.fixtures,
    faults: config.faults,
    maxHoldMs: config.maxHoldMs,
    auth: config.auth,
    // Bodies are never logged, so card data cannot reach the log; credentials are redacted should headers ever be.
    logger: { level: config.logLevel, redact: ['req.headers.authorization'] },
  });

  closeOnSignals(app, 10_000);

  const address = await listenOn(app, {
    name: 'mock core',
    host: config.host,
    port: config.port,
    portVariable: '--port or MOCK_CORE_PORT',
    hostVariable: '--host or MOCK_CORE_HOST',
  });
  app.log.info(
    { dataDir: config.dataDir, fixtures: config.fixtures, faults: config.faults, auth: config.auth.type },
    `mock core listening: ${address}/banks/<bankId>/v1 (e.g. ${address}/banks/demo)`,
  );
}

main().catch((err: unknown) => {
  const known = err instanceof MockCoreConfigError || err instanceof ListenError;
  process.stderr.write(known ? `${(err as Error).message}\n` : `mock core failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
