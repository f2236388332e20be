// Tracing's switch (issue 31): the standard OTEL_* variables turn it on, and off nothing of the OpenTelemetry SDK
// is loaded — the only module that imports it at run time is src/telemetry/sdk.ts, itself imported dynamically
// by startTracing(). The sampler is the one OTEL_TRACES_SAMPLER names.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT_CONTEXT, SamplingDecision, SpanKind, createContextKey, defaultTextMapGetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator, isTracingSuppressed, suppressTracing } from '@opentelemetry/core';
import { describe, expect, it, vi } from 'vitest';
import { TracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { ROOT as TRACE_ROOT } from '../../src/telemetry/context.js';
import { encodeSpan } from '../../src/telemetry/otlp-json.js';
import { contextManagerFromEnv, createTracing, samplerFromEnv } from '../../src/telemetry/sdk.js';
import type { Db } from '../../src/store/db.js';
import { TracedDb, tracedUnder } from '../../src/store/traced.js';
import { startOtlpReceiver } from '../helpers/otlp.js';
import { startTracing, tracing, tracingRequested } from '../../src/telemetry/index.js';
import { ROOT } from '../helpers/process.js';

describe('tracingRequested', () => {
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'cardline' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('%j → %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });

  it('startTracing without OTEL_* leaves tracing off', async () => {
    expect(await startTracing({})).toBeNull();
    expect(tracing()).toBeNull();
  });
});

describe('off by default: no module of the gateway imports OpenTelemetry at run time but the SDK loader', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
    });
  // An import of a value (not `import type`), static or dynamic.
  const VALUE_IMPORT = /^\s*import\s+(?!type\b)[^;]*?from\s+'@opentelemetry\/|import\(\s*'@opentelemetry\//m;

  it('only src/telemetry/sdk.ts imports @opentelemetry/* values', () => {
    const importers = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'connectors'))]
      .filter((f) => VALUE_IMPORT.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(importers).toEqual(['src/telemetry/sdk.ts']);
  });

  it('src/telemetry/sdk.ts is imported only dynamically, by startTracing()', () => {
    const importers = files(join(ROOT, 'src'))
      .filter((f) => /from\s+'\.{1,2}\/(?:telemetry\/)?sdk\.js'/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(importers).toEqual([]);
    expect(readFileSync(join(ROOT, 'src/telemetry/index.ts'), 'utf8')).toContain("await import('./sdk.js')");
  });
});

describe('samplerFromEnv', () => {
  it.each([
    [{}, 'ParentBased{root=AlwaysOnSampler'],
    [{ OTEL_TRACES_SAMPLER: 'always_on' }, 'AlwaysOnSampler'],
    [{ OTEL_TRACES_SAMPLER: 'always_off' }, 'AlwaysOffSampler'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, 'TraceIdRatioBased{0.1}'],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }, 'ParentBased{root=TraceIdRatioBased{0.25}'],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, 'ParentBased{root=AlwaysOffSampler'],
  ])('%j → %s', (env, described) => {
    expect(samplerFromEnv(env).toString()).toContain(described);
  });

  it('refuses a sampler it does not know, naming the ones it does', () => {
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER='jaeger_remote' is not one of always_on/);
  });
});

describe('an unsampled trace makes no span below its root, and hands on its context as it is', () => {
  const withTracing = async (sampler: string, fn: (t: ReturnType<typeof createTracing>) => Promise<void>, ratio = '0') => {
    const otlp = await startOtlpReceiver();
    // The exporter reads its endpoint from the process's environment, as in the gateway.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
    const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: ratio });
    try {
      await fn(t);
      await t.flush();
      return otlp;
    } finally {
      await t.shutdown();
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      await otlp.close();
    }
  };

  it.each(['always_off', 'parentbased_traceidratio', 'traceidratio'])('%s: the steps and statements under an unsampled request run in its context', async (sampler) => {
    let root = '';
    const seen: (string | undefined)[] = [];
    const otlp = await withTracing(sampler, async (t) => {
      const span = t.tracer.startSpan('POST /x');
      const ctx = t.api.trace.setSpan(t.api.ROOT_CONTEXT, span);
      root = t.traceparent(ctx)!;
      await t.inSpan('operation', {}, async () => {
        seen.push(t.traceparent());
        // Beneath it, a span made from the active context (a core call) and one that needs a parent (a statement).
        await t.inSpan('core upgradeLimit', {}, async () => seen.push(t.traceparent()));
        await t.inSpan('SELECT', {}, async (s) => seen.push(t.traceparent(t.api.trace.setSpan(t.api.ROOT_CONTEXT, s))), { requireParent: true });
      }, { parent: ctx });
      span.end();
    });
    // The core gets the request's own context, not sampled (flags 00), so that it does not sample it either.
    expect(root).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(seen).toEqual([root, root, root]);
    expect(otlp.spans).toEqual([]);
  });

  it('a sampled request still gets a span per step, its children under it', async () => {
    const otlp = await withTracing('always_on', async (t) => {
      const span = t.tracer.startSpan('POST /x');
      await t.inSpan('operation', {}, () => t.inSpan('SELECT', {}, async () => undefined, { requireParent: true }), { parent: t.api.trace.setSpan(t.api.ROOT_CONTEXT, span) });
      span.end();
    });
    const byName = Object.fromEntries(otlp.spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['POST /x', 'SELECT', 'operation']);
    expect(byName.operation!.parentSpanId).toBe(byName['POST /x']!.spanId);
    expect(byName.SELECT!.parentSpanId).toBe(byName.operation!.spanId);
  });

  it.each(['traceidratio', 'parentbased_traceidratio'])('%s: a sampled request\'s children are sampled, an unsampled one\'s made not at all', async (sampler) => {
    const sampled: string[] = [];
    const otlp = await withTracing(
      sampler,
      async (t) => {
        for (let i = 0; i < 40; i++) {
          const span = t.serverSpan('POST /x', t.root, { links: [], startTime: Date.now() }, () => ({}));
          if (span.isRecording()) sampled.push(span.spanContext().spanId);
          await t.inSpan('operation', {}, () => t.inSpan('SELECT', {}, async () => undefined, { requireParent: true }), { parent: t.api.trace.setSpan(t.root, span) });
          span.end();
        }
      },
      '0.5',
    );
    const named = (name: string) => otlp.spans.filter((s) => s.name === name);
    expect(sampled.length).toBeGreaterThan(0);
    expect(named('operation').map((s) => s.parentSpanId)).toEqual(sampled);
    expect(named('SELECT').map((s) => s.parentSpanId).sort()).toEqual(named('operation').map((s) => s.spanId).sort());
  });

  it('the server span: the sampler decides first; a request it does not keep gets ids, flags 00 and no attributes', async () => {
    const made: { sampled: boolean; recording: boolean; built: boolean; traceId: string }[] = [];
    const otlp = await withTracing(
      'parentbased_traceidratio',
      async (t) => {
        for (let i = 0; i < 40; i++) {
          let built = false;
          const span = t.serverSpan('POST /x', t.api.ROOT_CONTEXT, { links: [], startTime: Date.now() }, () => ((built = true), { 'cardline.tenant': 'demo' }));
          const sc = span.spanContext();
          expect(t.api.isSpanContextValid(sc)).toBe(true);
          made.push({ sampled: (sc.traceFlags & 1) === 1, recording: span.isRecording(), built, traceId: sc.traceId });
          span.end();
        }
      },
      '0.5',
    );
    expect(made.every((m) => m.sampled === m.recording && m.sampled === m.built)).toBe(true);
    expect(made.some((m) => m.sampled) && made.some((m) => !m.sampled)).toBe(true);
    // The SDK's span keeps the trace id the decision was made on.
    const sampler = samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    for (const m of made) expect(sampler.shouldSample(ROOT_CONTEXT, m.traceId, 'x', SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED).toBe(m.sampled);
    expect(otlp.spans.map((s) => s.attributes['cardline.tenant'])).toEqual(made.filter((m) => m.sampled).map(() => 'demo'));
  });
});

describe("tracing's contexts (chains of single values, decision 0449)", () => {
  it('hold what the API context holds: a value set, shadowed and deleted, each context unchanged by its children', () => {
    const key = createContextKey('cardline test key');
    const other = createContextKey('cardline other key');
    const a = TRACE_ROOT.setValue(key, 1);
    const b = a.setValue(other, 2).setValue(key, 3);
    const c = b.deleteValue(key);
    expect([TRACE_ROOT.getValue(key), a.getValue(key), b.getValue(key), b.getValue(other), c.getValue(key), c.getValue(other)]).toEqual([undefined, 1, 3, 2, undefined, 2]);
  });

  it("carry the span, the suppression and an extracted traceparent as the SDK and the propagator read them", () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const extracted = new W3CTraceContextPropagator().extract(TRACE_ROOT, { traceparent: parent }, defaultTextMapGetter);
    expect(trace.getSpanContext(extracted)).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    const span = trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '00f067aa0ba902b7', traceFlags: 1 });
    const child = trace.setSpan(extracted, span);
    expect(trace.getSpan(child)).toBe(span);
    expect(trace.getSpan(extracted)).not.toBe(span);
    expect([isTracingSuppressed(child), isTracingSuppressed(suppressTracing(child))]).toEqual([false, true]);
  });
});

describe('CARDLINE_TRACING_CONTEXT=explicit (decision 0456): no AsyncLocalStorage, every span given its parent', () => {
  const store: Db = {
    kind: 'pglite',
    query: async () => ({ rows: [], rowCount: 0 }),
    exec: async () => undefined,
    transaction: (fn) => fn(store),
    exclusive: (_id, fn) => fn(store),
    close: async () => undefined,
  };

  it.each(['async', 'explicit'])('%s: a statement is a child of the parent it is given; only async mode knows an active span', async (mode) => {
    const otlp = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
    const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_TRACES_SAMPLER: 'always_on', CARDLINE_TRACING_CONTEXT: mode });
    const activeAfterAwait: boolean[] = [];
    try {
      const db = new TracedDb(store, t);
      const span = t.tracer.startSpan('POST /x');
      await t.inSpan('operation', {}, async (_step, ctx) => {
        await Promise.resolve();
        activeAfterAwait.push(t.activeSpan() !== undefined);
        await tracedUnder(db, ctx).query('SELECT 1');
        // Without a parent given: under the active span in async mode, not traced in explicit mode.
        await db.query('UPDATE x SET y = 1');
      }, { parent: t.api.trace.setSpan(t.root, span) });
      span.end();
      await t.flush();
    } finally {
      await t.shutdown();
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      await otlp.close();
    }
    const byName = Object.fromEntries(otlp.spans.map((s) => [s.name, s]));
    expect(activeAfterAwait).toEqual([mode === 'async']);
    expect(byName.SELECT!.parentSpanId).toBe(byName.operation!.spanId);
    expect(Object.keys(byName).sort()).toEqual(mode === 'async' ? ['POST /x', 'SELECT', 'UPDATE', 'operation'] : ['POST /x', 'SELECT', 'operation']);
  });

  it('refuses a mode it does not know', () => {
    expect(() => contextManagerFromEnv({ CARDLINE_TRACING_CONTEXT: 'frame' })).toThrow("CARDLINE_TRACING_CONTEXT='frame' is not one of async, explicit");
  });
});

describe('the server span and a sampled parent\'s child, made without Tracer.startSpan (decision 0458)', () => {
  it('are the spans startSpan makes: parent, trace state, kind, attributes, links, status, flags, resource and scope', async () => {
    const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'parentbased_always_on' });
    const ended: ReadableSpan[] = [];
    (t.tracer as unknown as { _spanProcessor: { _spanProcessors: unknown[] } })._spanProcessor._spanProcessors.splice(0, 1, {
      onStart: () => undefined,
      onEnd: (s: ReadableSpan) => ended.push(s),
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    });
    try {
      const caller = t.extract('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=a,other=b')!;
      const linked = [{ context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b8', traceFlags: 0, isRemote: true }, attributes: { 'cardline.link': 'caller' } }];
      const server = t.serverSpan('POST /x', caller, { links: linked, startTime: Date.now() }, () => ({ 'cardline.tenant': 'demo' }));
      const officialServer = t.tracer.startSpan('POST /x', { kind: SpanKind.SERVER, links: linked, startTime: Date.now() }, caller);
      officialServer.setAttributes({ 'cardline.tenant': 'demo' });
      officialServer.end();
      const ctx = t.api.trace.setSpan(caller, server);
      const links = [{ context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 }, attributes: { 'cardline.link': 'caller', bad: { nested: 1 } as never } }];
      const attributes = { 'db.system.name': 'pglite', 'db.query.text': 'SELECT 1', n: 3, arr: ['x', 'y'], skipped: undefined };
      // The same child twice: through inSpan, and through the SDK's own Tracer.startSpan.
      await t.inSpan('SELECT', () => attributes, async () => undefined, { kind: SpanKind.CLIENT, links, parent: ctx });
      const official = t.tracer.startSpan('SELECT', { kind: SpanKind.CLIENT, links }, ctx);
      official.setAttributes(attributes);
      official.end();
      await expect(t.inSpan('core upgradeLimit', {}, async () => Promise.reject(new TypeError('no')), { parent: ctx })).rejects.toThrow('no');
      const failed = t.tracer.startSpan('core upgradeLimit', {}, ctx);
      failed.setAttribute('error.type', 'TypeError');
      failed.setStatus({ code: 2 });
      failed.end();
      server.end();
      const [sdkServer, ours, sdk, oursFailed, sdkFailed, oursServer] = ended;
      const comparable = (s: ReadableSpan) => {
        const doc = JSON.parse(encodeSpan(s)) as Record<string, unknown>;
        for (const k of ['spanId', 'startTimeUnixNano', 'endTimeUnixNano']) delete doc[k];
        return doc;
      };
      for (const [a, b] of [[oursServer!, sdkServer!], [ours!, sdk!], [oursFailed!, sdkFailed!]] as const) {
        expect(comparable(a)).toEqual(comparable(b));
        expect(a.constructor).toBe(b.constructor);
        expect(a.resource).toBe(b.resource);
        expect(a.instrumentationScope).toEqual(b.instrumentationScope);
        expect(a.spanContext().spanId).not.toBe(b.spanContext().spanId);
        expect(a.ended && a.duration[0] >= 0 && a.duration[1] >= 0).toBe(true);
      }
      expect(ours!.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(ours!.spanContext().traceState?.serialize()).toBe('vendor=a,other=b');
      expect(ours!.links[0]!.attributes).toEqual({ 'cardline.link': 'caller' });
    } finally {
      await t.shutdown();
    }
  });
});

describe('spans made without Tracer.startSpan: as startSpan makes them, or by it when the SDK changed (decision 0458)', () => {
  const capture = (tracer: unknown) => {
    const started: [ReadableSpan, unknown][] = [];
    const ended: ReadableSpan[] = [];
    const processor: SpanProcessor = { onStart: (s, ctx) => void started.push([s as unknown as ReadableSpan, ctx]), onEnd: (s) => void ended.push(s), forceFlush: async () => undefined, shutdown: async () => undefined };
    (tracer as { _spanProcessor: { _spanProcessors: unknown[] } })._spanProcessor._spanProcessors.splice(0, 1, processor);
    return { started, ended };
  };
  const CALLER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('an SDK whose Tracer holds its parts elsewhere: the gateway starts, warns once, and startSpan makes the same trace', async () => {
    const getTracer = TracerProvider.prototype.getTracer;
    let real: unknown;
    const hidden = vi.spyOn(TracerProvider.prototype, 'getTracer').mockImplementation(function (this: TracerProvider, ...args: Parameters<typeof getTracer>) {
      const tracer = getTracer.apply(this, args);
      if (args[0] === 'cardline') real = tracer;
      return { startSpan: tracer.startSpan.bind(tracer), startActiveSpan: tracer.startActiveSpan.bind(tracer) } as unknown as ReturnType<typeof getTracer>;
    });
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
      expect(warned.mock.calls).toEqual([['@opentelemetry/sdk-trace: its Tracer or span class changed; spans are made by Tracer.startSpan', { code: 'CARDLINE_TRACING_SPANS' }]]);
      const { ended } = capture(real);
      try {
        const server = t.serverSpan('POST /x', t.extract(CALLER)!, { links: [], startTime: Date.now() }, () => ({ 'cardline.tenant': 'demo' }));
        await t.inSpan('SELECT', { 'db.system.name': 'pglite' }, async () => undefined, { parent: t.api.trace.setSpan(TRACE_ROOT, server) });
        server.end();
        const root = vi.fn(() => ({ 'cardline.tenant': 'demo' }));
        expect(t.serverSpan('POST /x', TRACE_ROOT, { links: [], startTime: Date.now() }, root).isRecording()).toBe(false);
        expect(root).not.toHaveBeenCalled();
        expect(ended.map((s) => [s.name, s.kind, s.spanContext().traceId, s.parentSpanContext?.spanId, s.attributes])).toEqual([
          ['SELECT', SpanKind.INTERNAL, '0af7651916cd43dd8448eb211c80319c', server.spanContext().spanId, { 'db.system.name': 'pglite' }],
          ['POST /x', SpanKind.SERVER, '0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', { 'cardline.tenant': 'demo' }],
        ]);
      } finally {
        await t.shutdown();
      }
    } finally {
      hidden.mockRestore();
      warned.mockRestore();
    }
  });

  it('with this SDK: no warning, no startSpan for the server span or a local child, the processor told of each with its context', async () => {
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    warned.mockRestore();
    Object.assign((t.tracer as unknown as { _spanLimits: object })._spanLimits, { attributeCountLimit: 2, linkCountLimit: 1 });
    expect(warned).not.toHaveBeenCalled();
    const { started, ended } = capture(t.tracer);
    const startSpan = vi.spyOn(t.tracer, 'startSpan');
    try {
      const caller = t.extract(CALLER, 'vendor=a')!;
      const links = [1, 2].map((n) => ({ context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: `00f067aa0ba902b${n}`, traceFlags: 1 } }));
      const server = t.serverSpan('POST /x', caller, { links, startTime: Date.now() }, () => ({ a: 1, b: 2, c: 3 }));
      const ctx = t.api.trace.setSpan(caller, server);
      await t.inSpan('SELECT', { a: 1, b: 2, c: 3 }, async () => undefined, { parent: ctx, links });
      expect(t.serverSpan('POST /x', suppressTracing(caller), { links: [], startTime: Date.now() }, () => ({})).spanContext()).toEqual(trace.wrapSpanContext({ traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: 0 }).spanContext());
      server.end();
      expect(startSpan).not.toHaveBeenCalled();
      const sdk = t.tracer.startSpan('SELECT', { links }, ctx);
      sdk.setAttributes({ a: 1, b: 2, c: 3 });
      sdk.end();
      expect(started.map(([s, c]) => [s.name, c])).toEqual([['POST /x', caller], ['SELECT', ctx], ['SELECT', ctx]]);
      const [ours, theirs] = [ended[0]!, ended[2]!];
      for (const s of [ended[1]!, ours, theirs]) expect([s.attributes, s.droppedAttributesCount, s.links.length, s.droppedLinksCount]).toEqual([{ a: 1, b: 2 }, 1, 1, 1]);
      expect([ours.parentSpanContext, ours.spanContext().traceState?.serialize()]).toEqual([theirs.parentSpanContext, 'vendor=a']);
    } finally {
      await t.shutdown();
    }
  });

  it.each([
    ['parentbased_always_on', '00', false],
    ['parentbased_always_off', '01', true],
    ['always_on', '00', true],
  ])('%s, a remote parent with flags %s: the server span recording %s, as startSpan decides', async (sampler, flags, recording) => {
    const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: sampler });
    try {
      const caller = t.extract(`00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-${flags}`, 'vendor=a')!;
      const ours = t.serverSpan('POST /x', caller, { links: [], startTime: Date.now() }, () => ({}));
      const theirs = t.tracer.startSpan('POST /x', { kind: SpanKind.SERVER }, caller);
      for (const s of [ours, theirs]) expect([s.isRecording(), s.spanContext().traceId, s.spanContext().traceFlags, s.spanContext().traceState?.serialize()]).toEqual([recording, '0af7651916cd43dd8448eb211c80319c', recording ? 1 : 0, 'vendor=a']);
    } finally {
      await t.shutdown();
    }
  });
});
