// The role table (DESIGN §3, spec §5.4): which roles each kind of operation admits. Operations name a row;
// no route lists roles of its own.
import { ROLES, type Role } from '../../schemas/common.js';

const ACCESS = {
  /** Credit-limit changes: the bank's administrators and its systems, not its operations staff. */
  'credit-limit-write': ['Admin', 'API Integration'],
  /** Authorizations from the card processor: the bank's systems (and its administrators), never its operations staff. */
  'authorization-write': ['Admin', 'API Integration'],
  /** Disputes: the bank's people who take a cardholder's claim and answer for its outcome, not its systems. */
  'dispute-write': ['Admin', 'Operations'],
  /** Card lifecycle and customer writes (upgrade, activate, lock/unlock/block, PIN, preferences). */
  'card-write': ['Admin', 'Operations', 'API Integration'],
  /** Reads of cards, entities, limits, preferences, transactions and reports. */
  read: ROLES,
  /** The audit trail: people who answer for the bank; system-to-system traffic does not read it. */
  'audit-read': ['Admin', 'Operations', 'Read-Only'],
  /** Tenant configuration, users, keys and notification channels. */
  admin: ['Admin'],
  /** Sandbox simulations: the card writers, API Integration included (a bank's CI runs as its system user). */
  sandbox: ['Admin', 'Operations', 'API Integration'],
  /**
   * Four eyes: every role reads the tenant's approvals and acts on them; whether a caller may approve or reject
   * is the policy's (its approvers), whether one may cancel is the maker's.
   */
  approvals: ROLES,
  /** A user's own account (its password): every role. */
  self: ROLES,
} as const satisfies Record<string, readonly Role[]>;

/** A role table row; `public` needs no token; `operator` is an operator key on the management listener only. */
export type Access = keyof typeof ACCESS | 'public' | 'operator';

/** The tenant roles an access admits; null for `public` and `operator` (no tenant token is asked for). */
export const rolesOf = (access: Access): readonly Role[] | null => (access === 'public' || access === 'operator' ? null : ACCESS[access]);
