// `npm run connector:check -- <module> [--options <json>]`: runs the conformance suite over a connector module.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConnectorModuleError, loadConnectorModule } from '../loader.js';
import { capabilityTable, ConformanceOptionsError, runConformance, targetFromDefinition } from './runner.js';
import { scenarios } from './scenarios.js';
import type { ScenarioResult } from './types.js';

const HELP = `Usage: npm run connector:check -- <module> [--options <json>|@file.json] [--only <text>] [--timeout <ms>] [--verbose]

Loads a connector module (a path such as ./plugins/acme-core/index.ts, or a package name) whose default
export is a connector definition (defineConnector), validates the options against its optionsSchema,
and runs every conformance scenario on a fresh instance (create(options) once per scenario).

The scenarios assume the demo fixtures, so the core the connector talks to must hold them, fresh for
each instance: entities ENT-1001..ENT-1003 with a credit limit of 50000.00, nothing outstanding and one
ACTIVE virtual card each, no transaction; free kits KIT-2001..KIT-2005; KIT-2101 allocated to ENT-1003; no KIT-9999.

Options:
  --options <json>   the connector's options, a JSON object (or @path to a JSON file); default {}
  --only <text>      run only the scenarios whose name contains <text>
  --timeout <ms>     longest a scenario may take (default 15000)
  --verbose          connector logs (debug level) to stderr
  -h, --help         this text

A connector need not offer every operation: a scenario that needs one it does not offer is reported
NOT OFFERED, not failed, and a table of the contract's operations shows what it offers and which
scenarios exercised each.

Exit status: 0 when no scenario fails, 1 when one fails, 2 when the module or options are unusable.
`;

function usage(message: string): never {
  process.stderr.write(`connector:check: ${message}\n\n${HELP}`);
  process.exit(2);
}

function parseOptions(raw: string | undefined): unknown {
  if (raw === undefined) return {};
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (err) {
      usage(`--options ${raw}: cannot read the file: ${(err as Error).message}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    usage(`--options must be a JSON object, e.g. '{"latencyMs":0}': ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) usage('--options must be a JSON object');
  return value;
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      allowPositionals: true,
      options: {
        options: { type: 'string' },
        only: { type: 'string' },
        timeout: { type: 'string' },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    usage((err as Error).message);
  }
  if (args.values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [module, ...extra] = args.positionals;
  if (!module) usage('name the connector module to check');
  if (extra.length) usage(`one module at a time; unexpected ${extra.join(' ')}`);
  const timeoutMs = args.values.timeout === undefined ? undefined : Number(args.values.timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) usage('--timeout must be a positive whole number of milliseconds');
  const options = parseOptions(args.values.options);
  const selected = args.values.only ? scenarios.filter((s) => s.name.includes(args.values.only!)) : scenarios;
  if (selected.length === 0) usage(`no scenario name contains '${args.values.only}'`);

  const logger = args.values.verbose ? pino({ level: 'debug' }, pino.destination(2)) : undefined;
  let target;
  try {
    const definition = await loadConnectorModule(module);
    target = targetFromDefinition(definition, options, logger ? { logger } : {});
    process.stdout.write(`Conformance of connector ${definition.id} ${definition.version} (${module}), ${selected.length} scenarios\n\n`);
  } catch (err) {
    if (err instanceof ConnectorModuleError || err instanceof ConformanceOptionsError) {
      process.stderr.write(`connector:check: ${err.message}\n`);
      return 2;
    }
    throw err;
  }

  const width = Math.max(...selected.map((s) => s.name.length));
  const label = { passed: 'PASS', failed: 'FAIL', 'not-offered': 'NOT OFFERED' } as const;
  const line = (r: ScenarioResult) =>
    `  ${label[r.outcome].padEnd(11)}  ${r.scenario.padEnd(width)}  ${String(r.durationMs).padStart(5)} ms${r.outcome === 'passed' ? '' : `\n        ${r.reason}`}\n`;
  const report = await runConformance(target, {
    scenarios: selected,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(logger ? { logger } : {}),
    onResult: (r) => process.stdout.write(line(r)),
  });
  process.stdout.write(`\n${capabilityTable(report)}\n${report.passed} passed, ${report.failed} failed, ${report.notOffered} not offered\n`);
  return report.failed === 0 ? 0 : 1;
}

// Exit explicitly: a connector that leaks a timer or socket must not hang the check.
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`connector:check failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(2);
  },
);
