// `cardline audit verify`: recomputes a tenant's audit trail from the store and names the first break; with
// --checkpoint, also proves that a saved signed checkpoint is a prefix of today's trail.
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { CheckpointPayload } from '../audit/checkpoint.js';
import type { VerifyResult } from '../audit/verify.js';
import { STORE_HELP, fail, tenantId } from './common.js';
import { REMOTE_HELP, remoteTarget, withTarget } from './remote.js';

/** The platform's own trail (operators' actions that concern no tenant), verifiable like a tenant's. */
const PLATFORM_TRAIL = '_platform';
const trailId = (value: string): string => (value === PLATFORM_TRAIL ? value : tenantId(value));

/** The first break of a trail, as the CLI's one line. */
const broken = (labels: Record<string, string>, tenant: string, r: { chain: string; position: number; seq: number | null; reason: string; detail: string }): never =>
  fail(
    `audit trail of ${tenant === PLATFORM_TRAIL ? 'the platform' : `tenant '${tenant}'`} is broken in chain ${r.chain} at position ${r.position}${r.seq === null ? '' : ` (seq ${r.seq})`}: ` +
      `${labels[r.reason] ?? r.reason} (${r.detail}).`,
  );

export function auditCommand(): Command {
  const audit = new Command('audit').description("Check a tenant's tamper-evident audit trail.");

  audit
    .command('verify')
    .description("Verify a tenant's audit trail: every chain's hashes, links, positions from 1 and head.")
    .requiredOption('--tenant <id>', "the tenant whose trail is verified, or _platform for the platform's own", trailId)
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
consistent snapshot, so this may run against PostgreSQL while gateways keep writing. --tenant _platform
verifies the platform's own trail (operators' actions that concern no tenant).
With --admin-url, the running gateway verifies the trail (GET /v1/tenants/{id}/audit/verify); --checkpoint
needs the store.
${REMOTE_HELP}
${STORE_HELP}`,
    )
    .action(async (opts: { tenant: string; checkpoint?: string; since?: boolean }, command: Command) => {
      if (opts.since && opts.checkpoint === undefined) fail('--since needs --checkpoint <file>.');
      const { BREAK_LABELS, verifyChain } = await import('../audit/verify.js');
      const remote = remoteTarget(command);
      if (remote) {
        if (opts.checkpoint !== undefined) fail('--checkpoint is checked on the store: run this without --admin-url (and without CARDLINE_ADMIN_URL).');
        const { result } = await withTarget(remote, ['tenant-audit.verify'], (api) => api.tenantAudit.verify(opts.tenant));
        if (!result.ok) return broken(BREAK_LABELS, opts.tenant, result);
        process.stdout.write(`OK: ${result.records} records in ${result.chains.length} chain${result.chains.length === 1 ? '' : 's'}, root ${result.root}\n`);
        return;
      }
      if (opts.tenant === PLATFORM_TRAIL && opts.checkpoint !== undefined) fail("--checkpoint is for a tenant's trail: the platform's trail has no signed checkpoints.");
      const { requireTenant, withStore } = await import('./store.js');
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
        if (opts.tenant !== PLATFORM_TRAIL) await requireTenant(store, opts.tenant);
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
      if (!result.ok) return broken(BREAK_LABELS, opts.tenant, result);
      process.stdout.write(`OK: ${result.records} records${opts.since ? ' (read since the checkpoint)' : ''} in ${result.chains.length} chain${result.chains.length === 1 ? '' : 's'}, root ${result.root}\n`);
      if (checkpoint) {
        process.stdout.write(`OK: the checkpoint of ${checkpoint.at} (${checkpoint.size} records, root ${checkpoint.root}) is a prefix of today's trail\n`);
      }
    });

  return audit;
}
