// The mock core process: `npm run mock-core -- --port 9090`. Listens on loopback, closes gracefully on SIGTERM/SIGINT.
import { coreProtocolOpenApiText } from '../../schemas/core-protocol.js';
import { MockCoreConfigError, USAGE, parseMockCoreArgs } from './config.js';
import { buildMockCore } from './server.js';

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

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'mock core shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  const address = await app.listen({ host: config.host, port: config.port });
  app.log.info(
    { dataDir: config.dataDir, fixtures: config.fixtures, faults: config.faults, auth: config.auth.type },
    `mock core listening: ${address}/banks/<bankId>/v1 (e.g. ${address}/banks/demo)`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(err instanceof MockCoreConfigError ? `${err.message}\n` : `mock core failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
