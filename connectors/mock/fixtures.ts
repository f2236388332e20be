// Demo fixtures of the mock core: entities ENT-1001..1003 with a credit line and one virtual card each, kits;
// and the core's state as plain JSON (snapshots, fixture files).
import type { Preferences } from '../../schemas/cards.js';
import type { BlockReason, CardForm, CardState, Fulfilment } from '../../schemas/card-lifecycle.js';
import type { Contact, EntityType } from '../../schemas/entities.js';
import type { Channel, DeclineReason, Merchant, TransactionStatus, TransactionType } from '../../schemas/transactions.js';

interface Address {
  address1: string;
  address2?: string | undefined;
  city: string;
  state: string;
  country: string;
  pin: string;
}

export interface MockCard {
  cardId: string;
  entityId: string;
  form: CardForm;
  state: CardState;
  /** Luhn-valid test PAN; never leaves the connector unmasked in logs. */
  pan: string;
  /** `MM/YY`. */
  expiry: string;
  /** Core data: read by getCard for the gateway to encrypt, never stored or logged by the gateway. */
  cvv: string;
  /** Why the card was blocked, once it is BLOCKED. */
  blockReason?: BlockReason | undefined;
  /** Whether a PIN was set. The PIN block itself is handed on, never kept. */
  pinSet: boolean;
  kitNo?: string | undefined;
  fulfilment?: Fulfilment | undefined;
  deliveryAddress?: Address | undefined;
  plasticCode?: { code: string; description?: string | undefined } | undefined;
  preferences?: Preferences | undefined;
  /** Minor units; kept across the upgrade (spec 4.3: account and balance retained). */
  balanceMinor: bigint;
  /** The card that replaced this one (a card is replaced once). */
  replacedBy?: string | undefined;
}

export interface MockEntity {
  entityId: string;
  name: string;
  type: EntityType;
  contact: Contact;
  /** Credit limit in minor units. */
  creditLimitMinor: bigint;
  /** What the entity owes, in minor units: approved authorizations less repayments. */
  outstandingMinor: bigint;
  primaryAddress: Address;
}

/** An authorization the core decided, approved or declined; `seq` is its place in the core's order of arrival. */
export interface MockTransaction {
  transactionId: string;
  seq: number;
  cardId: string;
  entityId: string;
  amountMinor: bigint;
  channel: Channel;
  merchant: Merchant;
  international: boolean;
  status: TransactionStatus;
  declineReason: DeclineReason | null;
  at: string;
  /** Absent for the sandbox host's decisions (AUTHORIZATION); a hold and what followed it name their authorization. */
  type?: Exclude<TransactionType, 'AUTHORIZATION'> | undefined;
  authorizationId?: string | undefined;
}

/** An authorization's hold and what followed it, in minor units (contract.ts, HoldState). */
export interface MockHold {
  authorizationId: string;
  cardId: string;
  entityId: string;
  approved: boolean;
  declineReason: 'CARD_NOT_ACTIVE' | 'INSUFFICIENT_CREDIT' | null;
  authorizedMinor: bigint;
  heldMinor: bigint;
  clearedMinor: bigint;
  reversedMinor: bigint;
  refundedMinor: bigint;
  creditedMinor: bigint;
  at: string;
  /** Where and how, for the transaction list's entries (holds of older snapshots have none). */
  merchant?: Merchant | undefined;
  channel?: Channel | undefined;
  international?: boolean | undefined;
}

type HoldAmount = 'authorizedMinor' | 'heldMinor' | 'clearedMinor' | 'reversedMinor' | 'refundedMinor' | 'creditedMinor';
type HoldJson = Omit<MockHold, HoldAmount> & Record<HoldAmount, string>;

const holdToJson = (h: MockHold): HoldJson => ({
  ...h,
  authorizedMinor: h.authorizedMinor.toString(),
  heldMinor: h.heldMinor.toString(),
  clearedMinor: h.clearedMinor.toString(),
  reversedMinor: h.reversedMinor.toString(),
  refundedMinor: h.refundedMinor.toString(),
  creditedMinor: h.creditedMinor.toString(),
});

const holdFromJson = (h: HoldJson): MockHold => ({
  ...h,
  authorizedMinor: BigInt(h.authorizedMinor),
  heldMinor: BigInt(h.heldMinor),
  clearedMinor: BigInt(h.clearedMinor),
  reversedMinor: BigInt(h.reversedMinor),
  refundedMinor: BigInt(h.refundedMinor),
  creditedMinor: BigInt(h.creditedMinor),
});

interface MockRepayment {
  repaymentId: string;
  entityId: string;
  amountMinor: bigint;
  at: string;
}

interface MockKit {
  kitNo: string;
  /** Entity the kit was pre-allocated to, if any. */
  allocatedTo?: string | undefined;
  /** Card the kit is mapped to once used. */
  mappedTo?: string | undefined;
}

export interface MockCoreState {
  entities: Map<string, MockEntity>;
  cards: Map<string, MockCard>;
  kits: Map<string, MockKit>;
  /** In order of arrival (oldest first). */
  transactions: MockTransaction[];
  repayments: MockRepayment[];
  /** Authorizations' holds by authorizationId. */
  holds: Map<string, MockHold>;
  /** Outcomes by `<operation>:<idempotency key>`, so a retry applies once. */
  idempotency: Map<string, unknown>;
}

/** Appends the Luhn check digit to a partial number. */
export function withLuhnDigit(partial: string): string {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let d = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return partial + String((10 - (sum % 10)) % 10);
}

/** A fixed three-digit test CVV derived from the PAN, so that fixtures are reproducible. */
function demoCvv(pan: string): string {
  let h = 7;
  for (const d of pan) h = (h * 31 + Number(d)) % 900;
  return String(100 + h);
}

/** The expiry of fixture cards that carry none (older snapshots, hand-written fixtures). */
const DEMO_EXPIRY = '12/29';

/** The demo's records, made once: each core gets copies of the objects, sharing their strings (10 000 tenants, 0390). */
let demoTemplate: { entities: MockEntity[]; cards: MockCard[]; kits: MockKit[] } | undefined;

function demoRecords(): NonNullable<typeof demoTemplate> {
  if (demoTemplate) return demoTemplate;
  const cities = ['Lisbon', 'Porto', 'Braga'];
  const entities = ['ENT-1001', 'ENT-1002', 'ENT-1003'].map((entityId, i): MockEntity => ({
    entityId,
    name: `Demo Business ${i + 1}`,
    type: 'BUSINESS',
    contact: { email: `accounts@demo-business-${i + 1}.example`, mobile: `+35191000100${i + 1}` },
    creditLimitMinor: 5_000_000n,
    outstandingMinor: 0n,
    primaryAddress: { address1: `${10 + i} Demo Street`, city: cities[i]!, state: 'Demo', country: 'PT', pin: `100${i}-001` },
  }));
  // 15 digits and a Luhn check digit: 4000000000030017, 4000000000030025, 4000000000030033.
  const cards = entities.map((e, i) => virtualCard(3001 + i, e.entityId, BigInt(12_345 * (i + 1))));
  const kits: MockKit[] = [];
  for (let n = 2001; n <= 2005; n++) kits.push({ kitNo: `KIT-${n}` });
  kits.push({ kitNo: 'KIT-2101', allocatedTo: 'ENT-1003' });
  return (demoTemplate = { entities, cards, kits });
}

export function demoFixtures(): MockCoreState {
  const { entities, cards, kits } = demoRecords();
  return {
    entities: new Map(entities.map((e) => [e.entityId, { ...e, contact: { ...e.contact }, primaryAddress: { ...e.primaryAddress } }])),
    cards: new Map(cards.map((c) => [c.cardId, { ...c }])),
    kits: new Map(kits.map((k) => [k.kitNo, { ...k }])),
    transactions: [],
    repayments: [],
    holds: new Map(),
    idempotency: new Map(),
  };
}

/** The test PAN of card number `n` (CARD-<n>): `4`, n in 14 digits, and a Luhn check digit. */
const demoPan = (n: number): string => withLuhnDigit(`4${String(n).padStart(14, '0')}`);

/** Card CARD-<n>, VIRTUAL and ACTIVE; expiry fixed at 12/29, since a replayed journal must issue the same card. */
export function virtualCard(n: number, entityId: string, balanceMinor = 0n): MockCard {
  const pan = demoPan(n);
  return { cardId: `CARD-${n}`, entityId, form: 'VIRTUAL', state: 'ACTIVE', pan, expiry: DEMO_EXPIRY, cvv: demoCvv(pan), pinSet: false, balanceMinor };
}

export function emptyFixtures(): MockCoreState {
  return { entities: new Map(), cards: new Map(), kits: new Map(), transactions: [], repayments: [], holds: new Map(), idempotency: new Map() };
}

/** Contact details for entities of snapshots written before entities had them. */
const legacyContact = (entityId: string): Contact => ({ email: `${entityId.toLowerCase()}@example.invalid`, mobile: '+10000000000' });

/** The state as plain JSON (bigints as strings); later card fields are optional so older snapshots load. */
export interface MockCoreSnapshot {
  entities: (Omit<MockEntity, 'creditLimitMinor' | 'outstandingMinor' | 'type' | 'contact'> & {
    creditLimitMinor: string;
    outstandingMinor?: string | undefined;
    type?: EntityType | undefined;
    contact?: Contact | undefined;
  })[];
  cards: (Omit<MockCard, 'balanceMinor' | 'expiry' | 'cvv' | 'pinSet'> & {
    balanceMinor: string;
    expiry?: string | undefined;
    cvv?: string | undefined;
    pinSet?: boolean | undefined;
  })[];
  kits: MockKit[];
  transactions?: (Omit<MockTransaction, 'amountMinor'> & { amountMinor: string })[] | undefined;
  repayments?: (Omit<MockRepayment, 'amountMinor'> & { amountMinor: string })[] | undefined;
  holds?: HoldJson[] | undefined;
  idempotency: [string, unknown][];
}

export function toSnapshot(state: MockCoreState): MockCoreSnapshot {
  return {
    entities: [...state.entities.values()].map((e) => ({
      ...structuredClone(e),
      creditLimitMinor: e.creditLimitMinor.toString(),
      outstandingMinor: e.outstandingMinor.toString(),
    })),
    cards: [...state.cards.values()].map((c) => ({ ...structuredClone(c), balanceMinor: c.balanceMinor.toString() })),
    kits: [...state.kits.values()].map((k) => ({ ...k })),
    transactions: state.transactions.map((t) => ({ ...structuredClone(t), amountMinor: t.amountMinor.toString() })),
    repayments: state.repayments.map((r) => ({ ...r, amountMinor: r.amountMinor.toString() })),
    holds: [...state.holds.values()].map(holdToJson),
    idempotency: [...state.idempotency.entries()],
  };
}

export function fromSnapshot(s: MockCoreSnapshot): MockCoreState {
  return {
    entities: new Map(
      s.entities.map((e) => [
        e.entityId,
        {
          ...structuredClone(e),
          type: e.type ?? 'BUSINESS',
          contact: e.contact ?? legacyContact(e.entityId),
          creditLimitMinor: BigInt(e.creditLimitMinor),
          outstandingMinor: BigInt(e.outstandingMinor ?? '0'),
        },
      ]),
    ),
    cards: new Map(
      s.cards.map((c) => [
        c.cardId,
        {
          ...structuredClone(c),
          expiry: c.expiry ?? DEMO_EXPIRY,
          cvv: c.cvv ?? demoCvv(c.pan),
          pinSet: c.pinSet ?? false,
          balanceMinor: BigInt(c.balanceMinor),
        },
      ]),
    ),
    kits: new Map(s.kits.map((k) => [k.kitNo, { ...k }])),
    transactions: (s.transactions ?? []).map((t) => ({ ...structuredClone(t), amountMinor: BigInt(t.amountMinor) })),
    repayments: (s.repayments ?? []).map((r) => ({ ...r, amountMinor: BigInt(r.amountMinor) })),
    holds: new Map((s.holds ?? []).map((h) => [h.authorizationId, holdFromJson(h)])),
    idempotency: new Map(s.idempotency ?? []),
  };
}
