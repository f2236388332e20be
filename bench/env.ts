// The benches' settings from the environment, and the figures they read of a load run.

/** A whole number from the environment, `fallback` when unset; anything outside [min, max] stops the bench. */
export function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number between ${min} and ${max}`);
  return n;
}

/** `A=1 B=x y`: variables, a value running to the next NAME= (so NODE_OPTIONS may hold several flags). */
export const envOf = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/([A-Z_][A-Z0-9_]*)=(.*?)(?=\s+[A-Z_][A-Z0-9_]*=|\s*$)/g)].map((m) => [m[1]!, m[2]!]));

/** `name: A=1 B=2 | other: C=3`: named arms, each with its variables. */
export const envArms = (text = ''): [string, Record<string, string>][] =>
  text
    .split('|')
    .filter((a) => a.trim())
    .map((a) => [a.slice(0, a.indexOf(':')).trim(), envOf(a.slice(a.indexOf(':') + 1).trim())]);

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
