// `cardline audit verify`: recomputes a tenant's audit chain from the store and names the first break.
import { Command } from 'commander';
import { STORE_HELP, fail, tenantId } from './common.js';

export function auditCommand(): Command {
  const audit = new Command('audit').description("Check a tenant's tamper-evident audit trail.");

  audit
    .command('verify')
    .description("Verify a tenant's audit chain: every hash, every link, contiguous seqs from 1 and the head.")
    .requiredOption('--tenant <id>', 'the tenant whose chain is verified', tenantId)
    .addHelpText(
      'after',
      `
Prints "OK: <n> records, head <hash>" and exits 0 when the chain verifies. Otherwise names the first
seq where it breaks and why (edited record, deleted record or gap, reordered records, head mismatch),
on one line on stderr, and exits 1. The chain is read in pages from one consistent snapshot, so this
may run against PostgreSQL while gateways keep writing.
${STORE_HELP}`,
    )
    .action(async (opts: { tenant: string }) => {
      const { requireTenant, withStore } = await import('./store.js');
      const { BREAK_LABELS, verifyChain } = await import('../audit/verify.js');
      const result = await withStore({ masterKey: false }, async (store) => {
        await requireTenant(store, opts.tenant);
        return verifyChain(store.db, opts.tenant);
      });
      if (!result.ok) {
        fail(`audit chain of tenant '${opts.tenant}' is broken at seq ${result.seq}: ${BREAK_LABELS[result.reason]} (${result.detail}).`);
      }
      process.stdout.write(`OK: ${result.records} records, head ${result.head}\n`);
    });

  return audit;
}
