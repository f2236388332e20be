// The benches' settings from the environment, and the figures they read of a load run.

/** A whole number from the environment, `fallback` when unset; anything outside [min, max] stops the bench. */
export function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number between ${min} and ${max}`);
  return n;
}

/** What the benches read of one autocannon run: throughput, latency, and the answers that were not 2xx. */
export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

export function loadFigures(result: { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number; '2xx': number }): LoadFigures {
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors, total: result['2xx'] + result.non2xx };
}
