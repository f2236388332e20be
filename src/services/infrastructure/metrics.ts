// Prometheus metrics (prom-client), served by GET /metrics on the management listener: requests, connector
// calls and circuit breakers, audit batches, the outbox's depth, logins, and Node's own. Hot paths only
// increment; what the store or the connectors know is read when Prometheus scrapes (decision 0070).
import client from 'prom-client';
import type { MetricsTenants } from '../../config.js';
import { clusterMetrics } from './cluster-metrics.js';

/** How a connector call ended (as the core caller counts it). */
export type CallOutcome = 'succeeded' | 'business' | 'pending' | 'unavailable' | 'timeout' | 'internal';

/** What the services report as they work; the metrics module turns it into series. */
export interface Observer {
  request(route: string, method: string, status: number, tenant: string | null, seconds: number): void;
  connectorCall(tenant: string, connector: string, operation: string, outcome: CallOutcome, seconds: number, exemplar?: Exemplar): void;
  auditBatch(records: number, seconds: number): void;
  /** An audit batch found its writer's chain head moved and was computed again (decision 0200: never expected). */
  auditConflict(): void;
  /** Another writer took over a chain this one had left unwritten past its lease (decision 0286); it moved on. */
  auditChainTaken(): void;
  /** An audit record could not be committed (its request answered 500). */
  auditFailed(): void;
  /** A signed checkpoint of a tenant's trail was published, or could not be. */
  checkpoint(published: boolean): void;
  loginFailed(tenant: string): void;
  lockedOut(tenant: string): void;
}

/** How a shadow comparison ended (decision 0112): `dropped` when the tenant's shadow queue was full. */
export type ShadowOutcome = 'match' | 'diverged' | 'error' | 'dropped';

export interface ShadowObserver {
  shadowCall(tenant: string, operation: string, outcome: ShadowOutcome): void;
}

/** How a call to a tenant's decision endpoint ended: its answer, or why the stand-in stood (decision 0338). */
export type DecisionOutcome = 'approved' | 'declined' | 'timeout' | 'error' | 'busy';

export interface DecisionObserver {
  decisionCall(tenant: string, outcome: DecisionOutcome): void;
}

/** How a delivery attempt ended: delivered, due again, failed for good, or refused with 410 (channel disabled). */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

/** What the delivery worker reports: each attempt's outcome, and for a delivered event its lag. */
export interface DeliveryObserver {
  delivery(channelType: string, outcome: DeliveryOutcome, lagSeconds: number | null): void;
}

export interface MetricsOptions {
  /** The tenants with a `tenant` label value of their own (each multiplies the series); the others share `_other`. */
  tenants: MetricsTenants;
  /** Exemplars on the latency histograms, exposed when the scrape asks for OpenMetrics: on while tracing is on. */
  exemplars?: boolean;
}

/** A trace to attach to an observation as its exemplar. */
export interface Exemplar {
  traceId: string;
  spanId: string;
}

const OPENMETRICS = /application\/openmetrics-text/i;

/** The `tenant` label of every tenant beyond the bound (no tenant id starts with an underscore). */
export const OTHER_TENANTS = '_other';

/** Node's defaults named like counters (`…_total`) though gauges, each the sum of the unsuffixed gauge. */
const DUPLICATE_DEFAULTS = ['cardline_nodejs_active_handles_total', 'cardline_nodejs_active_requests_total', 'cardline_nodejs_active_resources_total'];

/** Scrape-time readers: what is not counted on the hot path. */
export interface Gauges {
  /** Events of record not yet delivered. */
  outboxDepth?: () => Promise<number>;
  /** Deliveries not yet settled (pending or being attempted). */
  deliveryDepth?: () => Promise<number>;
  /** Each started connector's circuit breaker, when it has one. */
  breakers?: () => { tenant: string; connector: string; state: 'closed' | 'half-open' | 'open' }[];
  /** The embedded store's thread's memory in bytes, or null when the store has no thread of its own (PostgreSQL). */
  storeMemory?: () => Promise<{ heapUsed: number; heapTotal: number; external: number; arrayBuffers: number; wasm: number } | null>;
}

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BREAKER_STATE = { closed: 0, 'half-open': 1, open: 2 } as const;

export class Metrics implements Observer, DeliveryObserver, ShadowObserver, DecisionObserver {
  readonly registry = new client.Registry();
  private readonly tenantLabel: boolean;
  private readonly tenants: MetricsTenants;
  /** The tenants given a label value of their own so far, when the first N are. */
  private readonly labelled = new Set<string>();
  /** The request path's series: counted here, handed to prom-client when a scrape reads them (decision 0421). */
  private readonly requests: Tallies;
  private readonly requestSeconds: Tallies;
  private readonly calls: Tallies;
  private readonly callSeconds: Tallies;
  private readonly shadowCalls: Tallies;
  private readonly decisionCalls: Tallies;
  private readonly requestHistogram: client.Histogram<string>;
  private readonly callHistogram: client.Histogram<string>;
  private readonly batchRecords: client.Histogram<string>;
  private readonly commitSeconds: client.Histogram<string>;
  private readonly auditConflicts: client.Counter<string>;
  private readonly auditChainsTaken: client.Counter<string>;
  private readonly loginFailures: client.Counter<string>;
  private readonly auditFailures: client.Counter<string>;
  private readonly checkpointFailures: client.Counter<string>;
  private readonly checkpointAt: client.Gauge<string>;
  private readonly lockouts: client.Counter<string>;
  private readonly deliveries: client.Counter<string>;
  private readonly deliveryLag: client.Histogram<string>;

  constructor(opts: MetricsOptions, gauges: Gauges = {}) {
    this.tenants = opts.tenants;
    this.tenantLabel = opts.tenants.kind !== 'none';
    const named = opts.tenants.kind === 'named' ? new Set(opts.tenants.ids) : null;
    if (named) this.labelOf = (tenant) => (named.has(tenant) ? tenant : OTHER_TENANTS);
    const registers = [this.registry];
    const t = (labels: string[]) => (this.tenantLabel ? [...labels, 'tenant'] : labels);
    client.collectDefaultMetrics({ register: this.registry, prefix: 'cardline_' });
    for (const name of DUPLICATE_DEFAULTS) this.registry.removeSingleMetric(name);
    const requests = new Tallies();
    const requestSeconds = new Tallies();
    const calls = new Tallies();
    const callSeconds = new Tallies();
    const shadowCalls = new Tallies();
    const decisionCalls = new Tallies();
    this.requests = requests;
    this.requestSeconds = requestSeconds;
    this.calls = calls;
    this.callSeconds = callSeconds;
    this.shadowCalls = shadowCalls;
    this.decisionCalls = decisionCalls;
    new client.Counter({
      name: 'cardline_http_requests_total',
      help: 'Requests answered, by route pattern, method and status.',
      labelNames: t(['route', 'method', 'status']),
      registers,
      collect() {
        requests.pushCounts(this);
      },
    });
    this.requestHistogram = new client.Histogram({
      name: 'cardline_http_request_duration_seconds',
      help: 'Time from the request to its answer, by route pattern, method and status.',
      labelNames: t(['route', 'method', 'status']),
      buckets: SECONDS_BUCKETS,
      // prom-client refuses exemplars on a Prometheus-text registry at construction: registered below instead.
      registers: opts.exemplars ? [] : registers,
      enableExemplars: opts.exemplars === true,
      collect() {
        requestSeconds.pushObservations(this);
      },
    });
    new client.Counter({
      name: 'cardline_connector_calls_total',
      help: 'Calls to a core, by connector, operation and outcome.',
      labelNames: t(['connector', 'operation', 'outcome']),
      registers,
      collect() {
        calls.pushCounts(this);
      },
    });
    this.callHistogram = new client.Histogram({
      name: 'cardline_connector_call_duration_seconds',
      help: 'Time a core took to answer, by connector and operation.',
      labelNames: t(['connector', 'operation']),
      buckets: SECONDS_BUCKETS,
      // prom-client refuses exemplars on a Prometheus-text registry at construction: registered below instead.
      registers: opts.exemplars ? [] : registers,
      enableExemplars: opts.exemplars === true,
      collect() {
        callSeconds.pushObservations(this);
      },
    });
    new client.Counter({
      name: 'cardline_shadow_calls_total',
      help: 'Calls copied to a shadow core, by operation and outcome (match, diverged, error, dropped).',
      labelNames: t(['operation', 'outcome']),
      registers,
      collect() {
        shadowCalls.pushCounts(this);
      },
    });
    new client.Counter({
      name: 'cardline_decision_calls_total',
      help: "Authorizations asked of a tenant's decision endpoint, by outcome (approved, declined; the stand-in's timeout, error, busy).",
      labelNames: t(['outcome']),
      registers,
      collect() {
        decisionCalls.pushCounts(this);
      },
    });
    this.batchRecords = new client.Histogram({
      name: 'cardline_audit_batch_records',
      help: 'Audit records (with their events and idempotency settlements) committed per statement.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers,
    });
    this.commitSeconds = new client.Histogram({ name: 'cardline_audit_commit_seconds', help: 'Time one audit batch took to commit.', buckets: SECONDS_BUCKETS, registers });
    this.auditConflicts = new client.Counter({
      name: 'cardline_audit_conflict_retries_total',
      help: "Audit batches computed again because the writer's chain head had moved (0 unless two writers share a chain).",
      registers,
    });
    this.auditChainsTaken = new client.Counter({
      name: 'cardline_audit_chains_taken_total',
      help: "Audit chains this process had left unwritten past their lease and another writer took over (it moved to another chain; nothing is lost).",
      registers,
    });
    this.auditFailures = new client.Counter({
      name: 'cardline_audit_write_failures_total',
      help: 'Audit records that could not be committed (each answered 500 and was not acknowledged).',
      registers,
    });
    this.checkpointFailures = new client.Counter({ name: 'cardline_audit_checkpoint_failures_total', help: 'Signed audit checkpoints that could not be published.', registers });
    this.checkpointAt = new client.Gauge({
      name: 'cardline_audit_checkpoint_last_published_timestamp_seconds',
      help: "When this process last published a signed checkpoint of a tenant's trail (0: none yet).",
      aggregator: 'max',
      registers,
    });
    this.loginFailures = new client.Counter({ name: 'cardline_login_failures_total', help: 'Logins refused for a wrong password of a known user.', labelNames: t([]), registers });
    this.lockouts = new client.Counter({ name: 'cardline_lockouts_total', help: 'Users locked after ten failed logins.', labelNames: t([]), registers });
    this.deliveries = new client.Counter({
      name: 'cardline_deliveries_total',
      help: 'Delivery attempts of notification channels, by channel type and outcome (delivered, retrying, failed, gone).',
      labelNames: ['channel_type', 'outcome'],
      registers,
    });
    this.deliveryLag = new client.Histogram({
      name: 'cardline_delivery_lag_seconds',
      help: 'Time from an event of record to its successful delivery, by channel type.',
      labelNames: ['channel_type'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800, 7200, 36000],
      registers,
    });
    // Read at scrape time, never per request; under workers the aggregate takes the highest reading, not the sum.
    const depthGauge = (name: string, help: string, read: (() => Promise<number>) | undefined) => {
      if (!read) return;
      new client.Gauge({
        name,
        help,
        registers,
        aggregator: 'max',
        async collect() {
          this.set(await read());
        },
      });
    };
    depthGauge('cardline_deliveries_pending', 'Deliveries to notification channels not yet settled (pending or being attempted).', gauges.deliveryDepth);
    depthGauge('cardline_outbox_pending', 'Events of record waiting to be delivered.', gauges.outboxDepth);
    if (gauges.breakers) {
      const breakers = gauges.breakers;
      const withTenant = this.tenantLabel;
      const labelOf = (tenant: string) => this.tenantValue(tenant);
      new client.Gauge({
        name: 'cardline_circuit_breaker_state',
        help: "A core's circuit breaker: 0 closed, 1 half-open, 2 open.",
        labelNames: withTenant ? ['connector', 'tenant'] : ['connector'],
        registers,
        // Each worker has its own breakers: the aggregate shows the worst.
        aggregator: 'max',
        collect() {
          this.reset();
          // Several tenants (beyond the bound) or connectors may share a label set: it shows the worst of them.
          const worst = new Map<string, { labels: Record<string, string>; state: number }>();
          for (const b of breakers()) {
            const labels: Record<string, string> = withTenant ? { connector: b.connector, tenant: labelOf(b.tenant) } : { connector: b.connector };
            const key = `${labels.connector}\u0000${labels.tenant ?? ''}`;
            const state = BREAKER_STATE[b.state];
            if ((worst.get(key)?.state ?? -1) < state) worst.set(key, { labels, state });
          }
          for (const { labels, state } of worst.values()) this.set(labels, state);
        },
      });
    }
    if (gauges.storeMemory) {
      const read = gauges.storeMemory;
      // The process's own figures (cardline_nodejs_*) are the gateway thread's: these are the store thread's.
      new client.Gauge({
        name: 'cardline_store_thread_memory_bytes',
        help:
          "The embedded store's thread: its V8 heap used and committed, its memory outside the heap and of that its array " +
          "buffers, and PostgreSQL's WebAssembly memory as declared (resident only where touched).",
        labelNames: ['area'],
        registers,
        // Each worker process has its own store (only one process runs on the embedded store, decision 0206).
        aggregator: 'sum',
        async collect() {
          this.reset();
          const m = await read();
          if (!m) return;
          this.set({ area: 'heap_used' }, m.heapUsed);
          this.set({ area: 'heap_committed' }, m.heapTotal);
          this.set({ area: 'external' }, m.external);
          this.set({ area: 'array_buffers' }, m.arrayBuffers);
          this.set({ area: 'wasm_memory' }, m.wasm);
        },
      });
    }
    this.tallied.set(this.requestHistogram, requestSeconds).set(this.callHistogram, callSeconds);
    if (opts.exemplars) for (const h of [this.requestHistogram, this.callHistogram]) this.registry.registerMetric(h);
    this.om = opts.exemplars ? new client.Registry<client.OpenMetricsContentType>() : null;
    this.om?.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE);
    for (const metric of this.om ? this.registry.getMetricsAsArray() : []) this.om!.registerMetric(metric as unknown as client.Metric);
  }

  /** The tenant's label value under the bound: its id while it is among the labelled ones, else `_other`. */
  private labelOf = (tenant: string): string => {
    if (this.tenants.kind === 'all' || this.labelled.has(tenant)) return tenant;
    if (this.tenants.kind === 'first' && this.labelled.size < this.tenants.count) {
      this.labelled.add(tenant);
      return tenant;
    }
    return OTHER_TENANTS;
  };

  /** The `tenant` label's value: '' where there is no label or no tenant. */
  private tenantValue(tenant: string | null): string {
    return this.tenantLabel && tenant !== null ? this.labelOf(tenant) : '';
  }

  private labels(base: Record<string, string>, tenant: string): Record<string, string> {
    return this.tenantLabel ? { ...base, tenant } : base;
  }

  request(route: string, method: string, status: number, tenant: string | null, seconds: number, exemplar?: Exemplar): void {
    const label = this.tenantValue(tenant);
    const key = `${route}\u0000${method}\u0000${status}\u0000${label}`;
    const counted = this.requests.at(key) ?? this.requests.open(key, this.labels({ route, method, status: String(status) }, label));
    counted.count++;
    observe(this.requestSeconds.at(key) ?? this.requestSeconds.open(key, counted.labels), seconds);
    if (exemplar && this.om) this.keepExemplar(this.requestHistogram, key, () => counted.labels, seconds, exemplar);
  }

  connectorCall(tenant: string, connector: string, operation: string, outcome: CallOutcome, seconds: number, exemplar?: Exemplar): void {
    const t = this.tenantValue(tenant);
    const callKey = `${connector}\u0000${operation}\u0000${outcome}\u0000${t}`;
    (this.calls.at(callKey) ?? this.calls.open(callKey, this.labels({ connector, operation, outcome }, t))).count++;
    const key = `${connector}\u0000${operation}\u0000${t}`;
    const timed = this.callSeconds.at(key) ?? this.callSeconds.open(key, this.labels({ connector, operation }, t));
    observe(timed, seconds);
    if (exemplar && this.om) this.keepExemplar(this.callHistogram, key, () => timed.labels, seconds, exemplar);
  }

  shadowCall(tenant: string, operation: string, outcome: ShadowOutcome): void {
    const t = this.tenantValue(tenant);
    const key = `${operation}\u0000${outcome}\u0000${t}`;
    (this.shadowCalls.at(key) ?? this.shadowCalls.open(key, this.labels({ operation, outcome }, t))).count++;
  }

  decisionCall(tenant: string, outcome: DecisionOutcome): void {
    const t = this.tenantValue(tenant);
    const key = `${outcome}\u0000${t}`;
    (this.decisionCalls.at(key) ?? this.decisionCalls.open(key, this.labels({ outcome }, t))).count++;
  }

  auditBatch(records: number, seconds: number): void {
    this.batchRecords.observe(records);
    this.commitSeconds.observe(seconds);
  }

  auditConflict(): void {
    this.auditConflicts.inc();
  }

  auditChainTaken(): void {
    this.auditChainsTaken.inc();
  }

  auditFailed(): void {
    this.auditFailures.inc();
  }

  checkpoint(published: boolean): void {
    if (published) this.checkpointAt.set(Date.now() / 1000);
    else this.checkpointFailures.inc();
  }

  loginFailed(tenant: string): void {
    this.loginFailures.inc(this.labels({}, this.tenantValue(tenant)));
  }

  lockedOut(tenant: string): void {
    this.lockouts.inc(this.labels({}, this.tenantValue(tenant)));
  }

  delivery(channelType: string, outcome: DeliveryOutcome, lagSeconds: number | null): void {
    this.deliveries.inc({ channel_type: channelType, outcome });
    if (lagSeconds !== null) this.deliveryLag.observe({ channel_type: channelType }, lagSeconds);
  }

  private readonly tallied = new Map<client.Histogram<string>, Tallies>();

  /** Each series' latest sampled trace per bucket, given to prom-client at an OpenMetrics scrape (decision 0408). */
  private readonly exemplars = new Map<client.Histogram<string>, Map<string, LatestExemplars>>();

  private keepExemplar(histogram: client.Histogram<string>, key: string, labels: () => Record<string, string>, seconds: number, exemplar: Exemplar): void {
    let series = this.exemplars.get(histogram);
    if (!series) this.exemplars.set(histogram, (series = new Map()));
    let latest = series.get(key);
    if (!latest) series.set(key, (latest = { labels, buckets: [] }));
    latest.buckets[bucketOf(seconds)] = { seconds, traceId: exemplar.traceId, spanId: exemplar.spanId, at: Date.now() / 1000 };
  }

  private async flushExemplars(): Promise<void> {
    for (const [histogram, series] of this.exemplars) {
      // The series' counts first, with no turn in between: prom-client keeps an exemplar only on a series it holds.
      this.tallied.get(histogram)?.pushObservations(histogram);
      const stamps = new Map<object, number>();
      for (const latest of series.values()) {
        const labels = latest.labels();
        for (const b of latest.buckets) {
          if (!b) continue;
          const labelSet = { trace_id: b.traceId, span_id: b.spanId };
          exemplify(histogram, labels, b.seconds, labelSet);
          stamps.set(labelSet, b.at);
        }
        latest.buckets = [];
      }
      // prom-client stamps an exemplar with the time it is set: put back the time it was observed.
      for (const { exemplar } of (await histogram.get()).values as { exemplar?: { labelSet: object; timestamp?: number } | null }[]) {
        const at = exemplar ? stamps.get(exemplar.labelSet) : undefined;
        if (at !== undefined) exemplar!.timestamp = at;
      }
    }
  }

  /** The same metrics in OpenMetrics, when exemplars are on. */
  private readonly om: client.Registry<client.OpenMetricsContentType> | null;

  /** Every worker's metrics from the primary, when this process is one of CARDLINE_WORKERS (src/cluster.ts). */
  private readonly clusterText = clusterMetrics(this.registry);

  /** The Prometheus text exposition: the whole gateway's, every worker's aggregated, under CARDLINE_WORKERS. */
  async text(): Promise<string> {
    if (!this.clusterText) return this.registry.metrics();
    try {
      return await this.clusterText();
    } catch (err) {
      // A worker that did not answer in time (it was stopping): this one's own figures, said so, beat none.
      return `# Cardline: the workers' metrics could not be aggregated (${(err as Error).message}); this process's only\n${await this.registry.metrics()}`;
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * What a scrape gets: OpenMetrics with its exemplars when it asks for it (Accept) and exemplars are on, the
   * Prometheus text otherwise (and always under CARDLINE_WORKERS, whose aggregate carries no exemplars).
   */
  async scrape(accept: string | undefined): Promise<{ body: string; contentType: string }> {
    const om = this.om;
    if (!om || this.clusterText || !accept || !OPENMETRICS.test(accept)) return { body: await this.text(), contentType: this.contentType };
    // prom-client renames counters (drops `_total`) while it writes OpenMetrics: the names are put back before
    // anything else reads them, and scrapes take turns.
    const run = this.scrapes.then(async () => {
      const counters = (om.getMetricsAsArray() as unknown as { type: string; name: string }[]).filter((m) => m.type === 'counter');
      const names = counters.map((m) => m.name);
      try {
        await this.flushExemplars();
        return await om.metrics();
      } finally {
        counters.forEach((m, i) => (m.name = names[i]!));
      }
    });
    this.scrapes = run.catch(() => undefined);
    return { body: await run, contentType: om.contentType };
  }

  private scrapes: Promise<unknown> = Promise.resolve();
}

interface HistogramEntry {
  labels: object;
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
}

// A series' figures since the last scrape (count; a histogram's sum and per-bucket, not cumulative, counts) and
// prom-client's entry of the series (`zero()` makes it) with the map it lives in (`reset()` replaces it).
interface Tally {
  labels: Record<string, string>;
  count: number;
  sum: number;
  buckets: number[];
  entry: HistogramEntry | undefined;
  map: object | undefined;
}

/** Series counted in a Map; prom-client gets them at a scrape (`collect`), not label checks per request (decision 0421). */
class Tallies {
  private readonly series = new Map<string, Tally>();

  at(key: string): Tally | undefined {
    return this.series.get(key);
  }

  open(key: string, labels: Record<string, string>): Tally {
    const s: Tally = { labels, count: 0, sum: 0, buckets: SECONDS_BUCKETS.map(() => 0), entry: undefined, map: undefined };
    this.series.set(key, s);
    return s;
  }

  pushCounts(counter: client.Counter<string>): void {
    for (const s of this.series.values()) {
      if (!s.count) continue;
      counter.inc(s.labels, s.count);
      s.count = 0;
    }
  }

  /** Adds each series' observations since the last scrape to the histogram, as `observe` one by one would have. */
  pushObservations(histogram: client.Histogram<string>): void {
    const internals = histogram as unknown as { hashMap: Record<string, HistogramEntry> };
    // A series new to prom-client's map gets its entry by `zero()`, found by its labels in one pass for all of them.
    let fresh: Map<object, Tally> | undefined;
    for (const s of this.series.values()) {
      if (!s.count) continue;
      if (s.map === internals.hashMap && s.entry) add(s, s.entry);
      else {
        histogram.zero(s.labels);
        (fresh ??= new Map()).set(s.labels, s);
      }
    }
    if (!fresh) return;
    for (const entry of Object.values(internals.hashMap)) {
      const s = fresh.get(entry.labels);
      if (!s) continue;
      fresh.delete(entry.labels);
      s.entry = entry;
      s.map = internals.hashMap;
      add(s, entry);
    }
    if (fresh.size) throw new Error(`prom-client's histogram does not keep the labels zero() is given: its series cannot be added to`);
  }
}

function add(s: Tally, entry: HistogramEntry): void {
  entry.count += s.count;
  entry.sum += s.sum;
  for (let i = 0; i < SECONDS_BUCKETS.length; i++) entry.bucketValues[SECONDS_BUCKETS[i]!]! += s.buckets[i]!;
  s.count = 0;
  s.sum = 0;
  s.buckets.fill(0);
}

function observe(s: Tally, seconds: number): void {
  s.count++;
  s.sum += seconds;
  const b = bucketOf(seconds);
  if (b < SECONDS_BUCKETS.length) s.buckets[b]!++;
}

/** A series' latest sampled observation in each bucket (the last slot is +Inf), `at` in seconds since the epoch. */
interface LatestExemplars {
  labels: () => Record<string, string>;
  buckets: ({ seconds: number; traceId: string; spanId: string; at: number } | undefined)[];
}

function bucketOf(seconds: number): number {
  for (let i = 0; i < SECONDS_BUCKETS.length; i++) if (seconds <= SECONDS_BUCKETS[i]!) return i;
  return SECONDS_BUCKETS.length;
}

/** Sets an observation's trace as its bucket's exemplar (prom-client keeps the latest per bucket). */
function exemplify(histogram: client.Histogram<string>, labels: Record<string, string>, seconds: number, labelSet: Record<string, string>): void {
  (histogram as unknown as { updateExemplar(l: Record<string, string>, v: number, e: Record<string, string>): void }).updateExemplar(labels, seconds, labelSet);
}
