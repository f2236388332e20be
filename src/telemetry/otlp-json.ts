// OTLP's JSON encoding of ended spans, written straight as text (decision 0451): the same document the SDK's
// JsonTraceSerializer makes (test/unit/otlp-json.test.ts decodes both and compares them), without its
// object graph per span, its BigInt timestamps or the TextEncoder copy.
import type { Attributes, HrTime, Link } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';

const str = JSON.stringify;

/** An HrTime as OTLP's decimal string of nanoseconds, as the SDK's encoder truncates it. */
export function nanos(t: HrTime): string {
  const s = Math.trunc(t[0]);
  const ns = String(Math.trunc(t[1]));
  return s === 0 ? ns : `${s}${'000000000'.slice(ns.length)}${ns}`;
}

function anyValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return `{"stringValue":${str(v)}}`;
    case 'number':
      return Number.isInteger(v) ? `{"intValue":${v}}` : `{"doubleValue":${str(v)}}`;
    case 'boolean':
      return `{"boolValue":${v}}`;
  }
  if (v instanceof Uint8Array) return `{"bytesValue":"${Buffer.from(v).toString('base64')}"}`;
  if (Array.isArray(v)) return `{"arrayValue":{"values":[${v.map(anyValue).join(',')}]}}`;
  if (typeof v === 'object' && v !== null) {
    return `{"kvlistValue":{"values":[${Object.keys(v).map((k) => `{"key":${str(k)},"value":${anyValue((v as Record<string, unknown>)[k])}}`).join(',')}]}}`;
  }
  return '{}';
}

// Per key, its `{"key":…,"value":` and the last string or number value written with it (most repeat: the
// method, route, tenant, operation, connector), so that a repeated pair is not encoded again.
interface KeyCache {
  prefix: string;
  value: unknown;
  pair: string;
}
const keys = new Map<string, KeyCache>();

function attributes(a: Attributes): string {
  let out = '';
  for (const key in a) {
    const value = a[key];
    let k = keys.get(key);
    if (k === undefined) {
      k = { prefix: `{"key":${str(key)},"value":`, value: undefined, pair: '' };
      if (keys.size < 1024) keys.set(key, k);
    }
    if (k.value !== value || k.pair === '') {
      const pair = `${k.prefix}${anyValue(value)}}`;
      if (typeof value !== 'object') {
        k.value = value;
        k.pair = pair;
      }
      out += out ? `,${pair}` : pair;
    } else out += out ? `,${k.pair}` : k.pair;
  }
  return `[${out}]`;
}

// OTLP's span flags: the W3C trace flags, and whether the parent's remoteness is known (it is) and true.
const flags = (traceFlags: number, remote: boolean | undefined) => (traceFlags & 0xff) | 0x100 | (remote ? 0x200 : 0);

function link(l: Link): string {
  const ts = l.context.traceState?.serialize();
  return (
    `{"attributes":${l.attributes ? attributes(l.attributes) : '[]'},"spanId":"${l.context.spanId}","traceId":"${l.context.traceId}"` +
    `${ts === undefined ? '' : `,"traceState":${str(ts)}`},"droppedAttributesCount":${l.droppedAttributesCount || 0},"flags":${flags(l.context.traceFlags, l.context.isRemote)}}`
  );
}

/** One span as an element of ScopeSpans.spans, its fields in the SDK's order. */
export function encodeSpan(span: ReadableSpan): string {
  const ctx = span.spanContext();
  const parent = span.parentSpanContext;
  const ts = ctx.traceState?.serialize();
  const { code, message } = span.status;
  let events = '';
  for (const e of span.events) {
    events += `${events ? ',' : ''}{"attributes":${e.attributes ? attributes(e.attributes) : '[]'},"name":${str(e.name)},"timeUnixNano":"${nanos(e.time)}","droppedAttributesCount":${e.droppedAttributesCount || 0}}`;
  }
  return (
    `{"traceId":"${ctx.traceId}","spanId":"${ctx.spanId}"${parent?.spanId ? `,"parentSpanId":"${parent.spanId}"` : ''}` +
    `${ts === undefined ? '' : `,"traceState":${str(ts)}`},"name":${str(span.name)},"kind":${span.kind == null ? 0 : span.kind + 1}` +
    `,"startTimeUnixNano":"${nanos(span.startTime)}","endTimeUnixNano":"${nanos(span.endTime)}","attributes":${attributes(span.attributes)}` +
    `,"droppedAttributesCount":${span.droppedAttributesCount},"events":[${events}],"droppedEventsCount":${span.droppedEventsCount}` +
    `,"status":{"code":${code}${message === undefined ? '' : `,"message":${str(message)}`}},"links":[${span.links.map(link).join(',')}]` +
    `,"droppedLinksCount":${span.droppedLinksCount},"flags":${flags(ctx.traceFlags, parent?.isRemote)}}`
  );
}

/** ResourceSpans' resource. */
export function encodeResource(r: Resource): string {
  return `{"attributes":${attributes(r.attributes)},"droppedAttributesCount":0${r.schemaUrl ? `,"schemaUrl":${str(r.schemaUrl)}` : ''}}`;
}

/** ScopeSpans' scope. */
export function encodeScope(s: InstrumentationScope & { attributes?: Attributes; droppedAttributesCount?: number }): string {
  const attrs = s.attributes && Object.keys(s.attributes).length > 0 ? `,"attributes":${attributes(s.attributes)},"droppedAttributesCount":${s.droppedAttributesCount ?? 0}` : '';
  return `{"name":${str(s.name)}${s.version === undefined ? '' : `,"version":${str(s.version)}`}${attrs}}`;
}

/** An OTLP/JSON request body and how many spans it holds: what JsonSpanProcessor hands its exporter. */
export interface JsonBatch {
  body: Uint8Array;
  spans: number;
}

/** The SDK's OTLP/HTTP export delegate (otlp-exporter-base) over a serializer that passes the body through. */
export interface BatchExporter {
  export(batch: JsonBatch, done: (result: { code: number; error?: Error }) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface JsonProcessorOptions {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
  onError: (err: Error) => void;
}

/** The spans of one resource and scope waiting for export, as UTF-8, each followed by a comma; kept once made. */
class Group {
  bytes = Buffer.allocUnsafe(64 * 1024);
  /** Where each span's bytes end. */
  ends: number[] = [];
  constructor(
    readonly resource: Resource,
    readonly scope: InstrumentationScope,
  ) {}

  add(json: string): void {
    const at = this.ends.at(-1) ?? 0;
    // A span is at most 3 bytes a UTF-16 unit, and its comma.
    if (this.bytes.length - at < json.length * 3 + 1) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, at + json.length * 3 + 1));
      this.bytes.copy(grown, 0, 0, at);
      this.bytes = grown;
    }
    const end = at + this.bytes.write(json, at);
    this.bytes[end] = 0x2c;
    this.ends.push(end + 1);
  }

  /** The first n spans' bytes without the last comma, copied; the rest move to the start. */
  take(n: number): Buffer {
    const end = this.ends[n - 1]!;
    const out = Buffer.from(this.bytes.subarray(0, end - 1));
    this.ends.splice(0, n);
    if (this.ends.length > 0) {
      this.bytes.copyWithin(0, end, this.ends.at(-1));
      for (let i = 0; i < this.ends.length; i++) this.ends[i]! -= end;
    }
    return out;
  }
}

/**
 * The SDK's BatchSpanProcessor's contract (queue bound, batch size, delay, timeout, flush, shutdown) with each
 * sampled span written as OTLP/JSON bytes as it ends, so that neither the span object nor a transformed copy
 * waits on the heap for its batch.
 */
export class JsonSpanProcessor implements SpanProcessor {
  private groups: Group[] = [];
  private queued = 0;
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly exporter: BatchExporter,
    private readonly opts: JsonProcessorOptions,
  ) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || !(span.spanContext().traceFlags & 1)) return;
    if (this.queued >= this.opts.maxQueueSize) return;
    const { resource, instrumentationScope: scope } = span;
    let group = this.groups[0];
    if (group?.scope !== scope || group.resource !== resource) {
      group = this.groups.find((g) => g.scope === scope && g.resource === resource);
      if (!group) this.groups.push((group = new Group(resource, scope)));
    }
    group.add(encodeSpan(span));
    this.queued += 1;
    if (this.queued >= this.opts.maxExportBatchSize) this.exportNow();
    else this.timer ??= setTimeout(() => this.exportNow(), this.opts.scheduledDelayMillis).unref();
  }

  /** Sends a batch unless one is on its way (its end sends the next). */
  private exportNow(): void {
    if (this.exporting || this.queued === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.exporting = this.send().finally(() => {
      this.exporting = undefined;
      if (this.queued >= this.opts.maxExportBatchSize) this.exportNow();
      else if (this.queued > 0) this.timer ??= setTimeout(() => this.exportNow(), this.opts.scheduledDelayMillis).unref();
    });
  }

  /** Takes up to a batch of the queued spans, as one ExportTraceServiceRequest. */
  private take(): JsonBatch {
    let room = this.opts.maxExportBatchSize;
    const parts: Buffer[] = [Buffer.from('{"resourceSpans":[')];
    let resource: Resource | undefined;
    const close = (r: Resource) => `]${r.schemaUrl ? `,"schemaUrl":${str(r.schemaUrl)}` : ''}}`;
    for (const group of this.groups) {
      const n = Math.min(room, group.ends.length);
      if (n === 0) continue;
      room -= n;
      this.queued -= n;
      // A group of another resource than the one before closes its ResourceSpans.
      const head = group.resource === resource ? ',' : `${resource ? `${close(resource)},` : ''}{"resource":${encodeResource(group.resource)},"scopeSpans":[`;
      resource = group.resource;
      parts.push(Buffer.from(`${head}{"scope":${encodeScope(group.scope)},"spans":[`), group.take(n), Buffer.from(`]${group.scope.schemaUrl ? `,"schemaUrl":${str(group.scope.schemaUrl)}` : ''}}`));
      if (room === 0) break;
    }
    parts.push(Buffer.from(`${resource ? close(resource) : ''}]}`));
    return { body: Buffer.concat(parts), spans: this.opts.maxExportBatchSize - room };
  }

  private send(): Promise<void> {
    const batch = this.take();
    return new Promise<void>((resolve) => {
      const timeout = setTimeout(() => {
        this.opts.onError(new Error('Timeout'));
        resolve();
      }, this.opts.exportTimeoutMillis);
      this.exporter.export(batch, (result) => {
        clearTimeout(timeout);
        if (result.code !== 0) this.opts.onError(result.error ?? new Error('span export failed'));
        resolve();
      });
    });
  }

  async forceFlush(): Promise<void> {
    while (this.exporting || this.queued > 0) {
      this.exportNow();
      await this.exporting;
    }
    await this.exporter.forceFlush();
  }

  shutdown(): Promise<void> {
    this.stopped ??= this.forceFlush().then(() => this.exporter.shutdown());
    return this.stopped;
  }
}
