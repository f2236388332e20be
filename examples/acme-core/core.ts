// A stand-in for Acme's core-banking client: its own vocabulary (customers, cents, reason codes),
// latency and abort. A real plugin puts its HTTP or MQ client here, with a pool, timeouts and close().

export type AcmeReason =
  | 'NO_CUSTOMER'
  | 'LOWERING_DENIED'
  | 'BAD_AMOUNT'
  | 'KIT_UNKNOWN'
  | 'KIT_USED'
  | 'KIT_RESERVED'
  | 'KIT_UNASSIGNED'
  | 'NO_CARD'
  | 'NO_VIRTUAL_CARD'
  | 'MANY_CARDS'
  | 'CARD_NOT_OPEN';

export type AcmeReply<T> = { ok: true; data: T } | { ok: false; reason: AcmeReason; text: string };

export interface SetCreditLine {
  customer: string;
  cents: bigint;
  mayLower: boolean;
  requestKey?: string | undefined;
}

export interface IssuePlastic {
  kit: string;
  customer?: string | undefined;
  card?: string | undefined;
  /** Issue the plastic on hold until the customer activates it. */
  hold: boolean;
  deliverTo: 'HOME' | { lines: string[]; country: string; postcode: string };
  requestKey?: string | undefined;
}

export interface Plastic {
  card: string;
  customer: string;
  kit: string;
  status: 'OPEN' | 'HOLD';
}

interface AcmeCard {
  ref: string;
  customer: string;
  kind: 'VIRTUAL' | 'PLASTIC';
  status: 'OPEN' | 'HOLD' | 'CLOSED';
  kit?: string;
}

/** Thrown when the caller's signal aborts before the core answered; nothing was applied. */
export class AcmeAbortError extends Error {
  constructor() {
    super('the call was aborted before Acme answered');
    this.name = 'AbortError';
  }
}

export interface AcmeState {
  customers: Map<string, { limitCents: bigint }>;
  cards: Map<string, AcmeCard>;
  /** Kit → the customer it is reserved for (null: free) and the card it is on, once used. */
  kits: Map<string, { reservedFor: string | null; card: string | null }>;
}

/** Acme's copy of the demo fixtures the conformance suite assumes. */
export function demoState(): AcmeState {
  const state: AcmeState = { customers: new Map(), cards: new Map(), kits: new Map() };
  ['ENT-1001', 'ENT-1002', 'ENT-1003'].forEach((customer, i) => {
    state.customers.set(customer, { limitCents: 5_000_000n });
    state.cards.set(`AC-${i + 1}`, { ref: `AC-${i + 1}`, customer, kind: 'VIRTUAL', status: 'OPEN' });
  });
  for (let n = 2001; n <= 2005; n++) state.kits.set(`KIT-${n}`, { reservedFor: null, card: null });
  state.kits.set('KIT-2101', { reservedFor: 'ENT-1003', card: null });
  return state;
}

export function emptyState(): AcmeState {
  return { customers: new Map(), cards: new Map(), kits: new Map() };
}

const refuse = <T>(reason: AcmeReason, text: string): AcmeReply<T> => ({ ok: false, reason, text });

export class AcmeCoreClient {
  /** Replies by request key, so that a retried request is answered, not applied, again. */
  private readonly replies = new Map<string, AcmeReply<unknown>>();

  constructor(
    private readonly state: AcmeState,
    private readonly latencyMs: number,
  ) {}

  async setCreditLine(req: SetCreditLine, signal: AbortSignal): Promise<AcmeReply<{ oldCents: bigint; newCents: bigint }>> {
    await this.wire(signal);
    return this.once(`limit:${req.requestKey}`, req.requestKey, () => {
      const customer = this.state.customers.get(req.customer);
      if (!customer) return refuse('NO_CUSTOMER', `no customer ${req.customer}`);
      if (req.cents <= 0n) return refuse('BAD_AMOUNT', 'a credit line must be positive');
      if (req.cents < customer.limitCents && !req.mayLower) return refuse('LOWERING_DENIED', 'lowering is not allowed for this product');
      const oldCents = customer.limitCents;
      customer.limitCents = req.cents;
      return { ok: true, data: { oldCents, newCents: req.cents } };
    });
  }

  async issuePlastic(req: IssuePlastic, signal: AbortSignal): Promise<AcmeReply<Plastic>> {
    await this.wire(signal);
    // Everything below runs without awaiting, so two concurrent requests are applied one after the other.
    return this.once(`plastic:${req.requestKey}`, req.requestKey, () => {
      const kit = this.state.kits.get(req.kit);
      if (!kit) return refuse('KIT_UNKNOWN', `no kit ${req.kit}`);
      if (kit.card) return refuse('KIT_USED', `kit ${req.kit} is on card ${kit.card}`);
      if (req.customer && !this.state.customers.has(req.customer)) return refuse('NO_CUSTOMER', `no customer ${req.customer}`);
      const customer = req.customer ?? (req.card ? this.state.cards.get(req.card)?.customer : kit.reservedFor);
      if (!customer) return req.card ? refuse('NO_CARD', `no card ${req.card}`) : refuse('KIT_UNASSIGNED', `kit ${req.kit} is not reserved; name the customer`);
      if (kit.reservedFor && kit.reservedFor !== customer) return refuse('KIT_RESERVED', `kit ${req.kit} is reserved for another customer`);
      const candidates = [...this.state.cards.values()].filter(
        (c) => c.customer === customer && (req.card ? c.ref === req.card : c.kind === 'VIRTUAL'),
      );
      if (candidates.length === 0) return req.card ? refuse('NO_CARD', `no card ${req.card} for ${customer}`) : refuse('NO_VIRTUAL_CARD', `${customer} has no virtual card`);
      if (candidates.length > 1) return refuse('MANY_CARDS', `${customer} has several virtual cards`);
      const card = candidates[0]!;
      if (card.kind !== 'VIRTUAL') return refuse('NO_VIRTUAL_CARD', `card ${card.ref} is already plastic`);
      if (card.status !== 'OPEN') return refuse('CARD_NOT_OPEN', `card ${card.ref} is ${card.status}`);
      card.kind = 'PLASTIC';
      card.status = req.hold ? 'HOLD' : 'OPEN';
      card.kit = req.kit;
      kit.card = card.ref;
      kit.reservedFor = customer;
      return { ok: true, data: { card: card.ref, customer, kit: req.kit, status: card.status } };
    });
  }

  async ping(): Promise<void> {
    await this.wire(AbortSignal.timeout(1000));
  }

  private once<T>(id: string, key: string | undefined, apply: () => AcmeReply<T>): AcmeReply<T> {
    if (key === undefined) return apply();
    const seen = this.replies.get(id);
    if (seen) return seen as AcmeReply<T>;
    const reply = apply();
    this.replies.set(id, reply);
    return reply;
  }

  /** The time on the wire; an abort before the answer leaves the state untouched. */
  private async wire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new AcmeAbortError();
    if (this.latencyMs === 0) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new AcmeAbortError());
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, this.latencyMs);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
