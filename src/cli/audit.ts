// `cardline audit verify`: recomputes a tenant's audit trail from the store and names the first break; with
// --checkpoint, also proves that a saved signed checkpoint is a prefix of today's trail.
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { CheckpointPayload } from '../audit/checkpoint.js';
import type { VerifyResult } from '../audit/verify.js';
import { STORE_HELP, fail, tenantId } from './common.js';

export function auditCommand(): Command {
  const audit = new Command('audit').description("Check a tenant's tamper-evident audit trail.");

  audit
    .command('verify')
    .description("Verify a tenant's audit trail: every chain's hashes, links, positions from 1 and head.")
    .requiredOption('--tenant <id>', 'the tenant whose trail is verified', tenantId)
    .option('--checkpoint <file>', 'a saved checkpoint (the answer of GET /v1/audit/checkpoints/latest): prove the trail extends it')
    .option('--since', 'with --checkpoint: read only the records written since the checkpoint (a quick proof that it was extended, not a full verification)')
    .addHelpText(
      'after',
      `
Prints "OK: <n> records in <k> chains, root <hash>" and exits 0 when the trail verifies. Otherwise names the
first place where it breaks and why (edited record, deleted record or gap, reordered records, head
mismatch, not an extension of the checkpoint), on one line on stderr, and exits 1. With --checkpoint the
checkpoint's signature is checked against the tenant's signing key in the store, and each chain it names
must still hold its head at its size; a second line says so. With --since the chains are read from the
checkpoint's heads on only: a proof, in time proportional to what was written since, that the trail
extends the checkpoint (an edit before it that left every hash alone needs the full run). The trail is read in pages from one
consistent snapshot, so this may run against PostgreSQL while gateways keep writing.
${STORE_HELP}`,
    )
    .action(async (opts: { tenant: string; checkpoint?: string; since?: boolean }) => {
      if (opts.since && opts.checkpoint === undefined) fail('--since needs --checkpoint <file>.');
      const { requireTenant, withStore } = await import('./store.js');
      const { BREAK_LABELS, verifyChain } = await import('../audit/verify.js');
      const { CheckpointError, openCheckpoint } = await import('../audit/checkpoint.js');
      let text: string | undefined;
      if (opts.checkpoint !== undefined) {
        try {
          text = await readFile(opts.checkpoint, 'utf8');
        } catch (err) {
          fail(`cannot read checkpoint file '${opts.checkpoint}': ${(err as NodeJS.ErrnoException).code ?? String(err)}.`);
        }
      }
      type Outcome = { error: string } | { checkpoint: CheckpointPayload | undefined; result: VerifyResult };
      const outcome = await withStore({ masterKey: false }, async (store): Promise<Outcome> => {
        await requireTenant(store, opts.tenant);
        let checkpoint: CheckpointPayload | undefined;
        if (text !== undefined) {
          try {
            checkpoint = await openCheckpoint(store.db, opts.tenant, text);
          } catch (err) {
            if (err instanceof CheckpointError) return { error: `checkpoint '${opts.checkpoint}' refused: ${err.message}.` };
            throw err;
          }
        }
        return { checkpoint, result: await verifyChain(store.db, opts.tenant, { checkpoint: checkpoint?.chains ?? [], since: opts.since === true }) };
      });
      if ('error' in outcome) return fail(outcome.error);
      const { result, checkpoint } = outcome;
      if (!result.ok) {
        const at = result.seq === null ? '' : ` (seq ${result.seq})`;
        fail(
          `audit trail of tenant '${opts.tenant}' is broken in chain ${result.chain} at position ${result.position}${at}: ` +
            `${BREAK_LABELS[result.reason]} (${result.detail}).`,
        );
      }
      process.stdout.write(`OK: ${result.records} records${opts.since ? ' (read since the checkpoint)' : ''} in ${result.chains.length} chain${result.chains.length === 1 ? '' : 's'}, root ${result.root}\n`);
      if (checkpoint) {
        process.stdout.write(`OK: the checkpoint of ${checkpoint.at} (${checkpoint.size} records, root ${checkpoint.root}) is a prefix of today's trail\n`);
      }
    });

  return audit;
}
