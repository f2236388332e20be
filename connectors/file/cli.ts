// `npm run file-core -- export|import`: moves a file core's state in and out as fixtures JSON.
import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import { exportFixtures, importFixtures } from './store.js';

const integer = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number of milliseconds');
  return n;
};

const program = new Command('file-core').description("Export or import a file core's state (fixtures JSON)");

program
  .command('export')
  .description('Print the state of a directory as JSON (works while a gateway has it open)')
  .requiredOption('--dir <dir>', 'the file core directory')
  .action(async (opts: { dir: string }) => {
    process.stdout.write(`${JSON.stringify(await exportFixtures(opts.dir), null, 2)}\n`);
  });

program
  .command('import')
  .description("Replace a directory's state with fixtures JSON (the directory must not be open elsewhere)")
  .requiredOption('--dir <dir>', 'the file core directory (created when missing)')
  .requiredOption('--from <file>', 'fixtures JSON, as export prints it')
  .option('--lock-timeout <ms>', 'wait this long for another holder of the directory', integer, 0)
  .action(async (opts: { dir: string; from: string; lockTimeout: number }) => {
    let snapshot: unknown;
    try {
      snapshot = JSON.parse(await readFile(opts.from, 'utf8'));
    } catch (err) {
      throw new Error(`${opts.from} is not readable JSON: ${(err as Error).message}`);
    }
    await importFixtures(opts.dir, snapshot, { lockTimeoutMs: opts.lockTimeout });
    process.stderr.write(`imported ${opts.from} into ${opts.dir}\n`);
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`file-core: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
