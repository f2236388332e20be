// The compiled gateway's export thread (CARDLINE_TRACE_EXPORT_THREAD=1, decision 0413): dist/'s sdk.js starts
// dist/'s export-worker.js (not the TypeScript source through tsx), and its spans reach the receiver.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { startOtlpReceiver } from '../helpers/otlp.js';
import { ROOT } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

it('the compiled export thread exports a span and its child, and a shutdown waits for it', async () => {
  const otlp = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
  try {
    const sdk = (await import(pathToFileURL(join(ROOT, 'dist/src/telemetry/sdk.js')).href)) as typeof import('../../src/telemetry/sdk.js');
    const t = sdk.createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '600000', CARDLINE_TRACE_EXPORT_THREAD: '1' });
    await t.inSpan('operation', { 'cardline.operation': 'upgradeLimit' }, () => t.inSpan('core upgradeLimit', {}, async () => undefined));
    await t.shutdown();
    const byName = Object.fromEntries(otlp.spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['core upgradeLimit', 'operation']);
    expect(byName['core upgradeLimit']!.parentSpanId).toBe(byName.operation!.spanId);
    expect(byName.operation!.attributes).toEqual({ 'cardline.operation': 'upgradeLimit' });
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await otlp.close();
  }
});
