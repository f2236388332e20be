// The console's live figures are read from the Prometheus text exposition GET /metrics answers (under
// CARDLINE_WORKERS, every worker's aggregated): the request histogram summed over route, method and status,
// overall and per tenant, label values unescaped, other series left alone.
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { figuresOf } from '../../src/services/infrastructure/figures.js';

const D = 'cardline_http_request_duration_seconds';

describe('figuresOf', () => {
  it('sums the histogram overall and per tenant; 5xx are the errors; +Inf and other metrics are left out', () => {
    const text = [
      `# HELP ${D} Request latency`,
      `# TYPE ${D} histogram`,
      `${D}_bucket{le="0.01",route="/api/keys",method="GET",status="200",tenant="demo"} 3`,
      `${D}_bucket{le="0.1",route="/api/keys",method="GET",status="200",tenant="demo"} 4`,
      `${D}_bucket{le="+Inf",route="/api/keys",method="GET",status="200",tenant="demo"} 5`,
      `${D}_sum{route="/api/keys",method="GET",status="200",tenant="demo"} 1.5`,
      `${D}_count{route="/api/keys",method="GET",status="200",tenant="demo"} 5`,
      `${D}_bucket{le="0.01",route="/v1/x \\"q\\" {a}",method="POST",status="503",tenant="acme"} 0`,
      `${D}_bucket{le="0.1",route="/v1/x \\"q\\" {a}",method="POST",status="503",tenant="acme"} 2`,
      `${D}_bucket{le="+Inf",route="/v1/x \\"q\\" {a}",method="POST",status="503",tenant="acme"} 2`,
      `${D}_count{route="/v1/x \\"q\\" {a}",method="POST",status="503",tenant="acme"} 2`,
      `${D}_count{route="/health",method="GET",status="200",tenant=""} 7`,
      'cardline_http_requests_total{route="/api/keys",method="GET",status="200",tenant="demo"} 99',
      '',
    ].join('\n');
    expect(figuresOf(text, new Date('2026-11-27T09:00:00Z'))).toEqual({
      at: '2026-11-27T09:00:00.000Z',
      bounds: [0.01, 0.1],
      overall: { requests: 14, errors: 2, buckets: [3, 6] },
      tenants: { demo: { requests: 5, errors: 0, buckets: [3, 4] }, acme: { requests: 2, errors: 2, buckets: [0, 2] } },
    });
  });

  it("reads prom-client's own exposition of a histogram", async () => {
    const registry = new client.Registry();
    const h = new client.Histogram({ name: D, help: 'x', labelNames: ['route', 'method', 'status', 'tenant'], buckets: [0.005, 0.05], registers: [registry] });
    h.observe({ route: '/a', method: 'GET', status: '200', tenant: 't1' }, 0.001);
    h.observe({ route: '/a', method: 'GET', status: '500', tenant: 't1' }, 0.01);
    h.observe({ route: '/b', method: 'GET', status: '200', tenant: '' }, 1);
    const f = figuresOf(await registry.metrics());
    expect(f.bounds).toEqual([0.005, 0.05]);
    expect(f.overall).toEqual({ requests: 3, errors: 1, buckets: [1, 2] });
    expect(f.tenants).toEqual({ t1: { requests: 2, errors: 1, buckets: [1, 2] } });
  });
});
