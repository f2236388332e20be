// OTLP's JSON encoding of ended spans, written straight as text (decision 0451): the same document the SDK's
// JsonTraceSerializer makes (test/unit/otlp-json.test.ts decodes both and compares them), without its
// object graph per span, its BigInt timestamps or the TextEncoder copy.
import type { Attributes, HrTime, Link } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

const str = JSON.stringify;

/** An HrTime as OTLP's decimal string of nanoseconds, as the SDK's encoder truncates it. */
export function nanos(t: HrTime): string {
  const s = Math.trunc(t[0]);
  const n = Math.trunc(t[1]);
  if (s < 0 || n < 0 || n >= 1e9) return String(BigInt(s) * 1_000_000_000n + BigInt(n));
  const ns = String(n);
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
  if (Array.isArray(v)) return `{"arrayValue":{"values":[${Array.from(v, anyValue).join(',')}]}}`;
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

// The request is written here and copied out: one buffer, grown as needed, for every batch.
let scratch = Buffer.allocUnsafe(256 * 1024);
let at = 0;

function put(text: string): void {
  if (scratch.length - at < text.length * 3 + 1) {
    const grown = Buffer.allocUnsafe(Math.max(scratch.length * 2, at + text.length * 3 + 1));
    scratch.copy(grown, 0, 0, at);
    scratch = grown;
  }
  at += scratch.write(text, at);
}

/** A batch of spans as an ExportTraceServiceRequest in OTLP/JSON: by resource, then by scope, as the SDK groups them. */
export function serializeSpans(spans: ReadableSpan[]): Uint8Array {
  const byResource = new Map<Resource, Map<InstrumentationScope, ReadableSpan[]>>();
  for (const span of spans) {
    let scopes = byResource.get(span.resource);
    if (!scopes) byResource.set(span.resource, (scopes = new Map()));
    const list = scopes.get(span.instrumentationScope);
    if (list) list.push(span);
    else scopes.set(span.instrumentationScope, [span]);
  }
  at = 0;
  put('{"resourceSpans":[');
  let r = 0;
  for (const [resource, scopes] of byResource) {
    put(`${r++ ? ',' : ''}{"resource":${encodeResource(resource)},"scopeSpans":[`);
    let n = 0;
    for (const [scope, list] of scopes) {
      put(`${n++ ? ',' : ''}{"scope":${encodeScope(scope)},"spans":[`);
      for (let i = 0; i < list.length; i++) {
        if (i) scratch[at++] = 0x2c;
        put(encodeSpan(list[i]!));
      }
      put(`]${scope.schemaUrl ? `,"schemaUrl":${str(scope.schemaUrl)}` : ''}}`);
    }
    put(`]${resource.schemaUrl ? `,"schemaUrl":${str(resource.schemaUrl)}` : ''}}`);
  }
  put(']}');
  return Buffer.from(scratch.subarray(0, at));
}
