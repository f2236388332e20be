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
  | 'CARD_NOT_OPEN'
  | 'ALREADY_PLASTIC'
  | 'WRONG_STATUS'
  | 'ALREADY_CLOSED'
  | 'NOT_PLASTIC'
  | 'DELIVERED_ALREADY';

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
  /** Spending controls to start with (Acme keeps Cardline's preferences as an opaque document). */
  controls?: unknown;
  requestKey?: string | undefined;
}

export type AcmeStatus = 'OPEN' | 'HOLD' | 'FROZEN' | 'CLOSED';
export type AcmeDelivery = 'QUEUED' | 'PRINTED' | 'SHIPPED' | 'RECEIVED';
export type AcmeCloseReason = 'LOST' | 'STOLEN' | 'DAMAGED' | 'FRAUD' | 'CUSTOMER' | 'ACCOUNT';

/**
 * Acme's status commands. Acme enforces its own rules (see `command`); the connector does not
 * second-guess them, and the conformance suite checks them against Cardline's transition table.
 */
export type AcmeCommand = 'RELEASE' | 'FREEZE' | 'UNFREEZE' | 'CLOSE' | 'SHIP_STEP';

export interface CardCommand {
  card: string;
  command: AcmeCommand;
  /** CLOSE only. */
  reason?: AcmeCloseReason | undefined;
  requestKey?: string | undefined;
}

/** A card as Acme returns it, number and security code included (Acme's API is private to the bank). */
export interface AcmeCardView {
  ref: string;
  customer: string;
  kind: 'VIRTUAL' | 'PLASTIC';
  status: AcmeStatus;
  kit?: string | undefined;
  delivery?: AcmeDelivery | undefined;
  number: string;
  /** Acme writes expiry dates as YYMM. */
  validThru: string;
  securityCode: string;
  closeReason?: AcmeCloseReason | undefined;
  design?: string | undefined;
  controls?: unknown;
}

export interface Plastic {
  card: string;
  customer: string;
  kit: string;
  status: 'OPEN' | 'HOLD';
}

type AcmeCard = AcmeCardView & { pinIssued: boolean };

const DELIVERY_STEPS: AcmeDelivery[] = ['QUEUED', 'PRINTED', 'SHIPPED', 'RECEIVED'];
const NUMBERS = ['5100000000001014', '5100000000002020', '5100000000003036'];

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
    state.cards.set(`AC-${i + 1}`, {
      ref: `AC-${i + 1}`,
      customer,
      kind: 'VIRTUAL',
      status: 'OPEN',
      number: NUMBERS[i]!,
      validThru: '2912',
      securityCode: String(321 + i * 111),
      pinIssued: false,
    });
  });
  for (let n = 2001; n <= 2005; n++) state.kits.set(`KIT-${n}`, { reservedFor: null, card: null });
  state.kits.set('KIT-2101', { reservedFor: 'ENT-1003', card: null });
  return state;
}

export function emptyState(): AcmeState {
  return { customers: new Map(), cards: new Map(), kits: new Map() };
}

const refuse = <T>(reason: AcmeReason, text: string): AcmeReply<T> => ({ ok: false, reason, text });
const view = (card: AcmeCard): AcmeCardView => {
  const { pinIssued: _pin, ...rest } = card;
  return structuredClone(rest);
};

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
      if (card.status === 'CLOSED') return refuse('ALREADY_CLOSED', `card ${card.ref} is closed`);
      if (card.kind !== 'VIRTUAL') return refuse('ALREADY_PLASTIC', `card ${card.ref} is already plastic`);
      if (card.status !== 'OPEN') return refuse('CARD_NOT_OPEN', `card ${card.ref} is ${card.status}`);
      card.kind = 'PLASTIC';
      card.status = req.hold ? 'HOLD' : 'OPEN';
      card.kit = req.kit;
      card.delivery = 'QUEUED';
      if (req.controls !== undefined) card.controls = structuredClone(req.controls);
      kit.card = card.ref;
      kit.reservedFor = customer;
      return { ok: true, data: { card: card.ref, customer, kit: req.kit, status: card.status } };
    });
  }

  /** Cards matching every filter given. An unknown customer is refused, an unknown card or kit matches nothing. */
  async findCards(query: { customer?: string | undefined; card?: string | undefined; kit?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<AcmeCardView[]>> {
    await this.wire(signal);
    if (query.customer !== undefined && !this.state.customers.has(query.customer)) return refuse('NO_CUSTOMER', `no customer ${query.customer}`);
    const cards = [...this.state.cards.values()].filter(
      (c) =>
        (query.customer === undefined || c.customer === query.customer) &&
        (query.card === undefined || c.ref === query.card) &&
        (query.kit === undefined || c.kit === query.kit),
    );
    return { ok: true, data: cards.map(view) };
  }

  async card(ref: string, signal: AbortSignal): Promise<AcmeReply<AcmeCardView>> {
    await this.wire(signal);
    const card = this.state.cards.get(ref);
    return card ? { ok: true, data: view(card) } : refuse('NO_CARD', `no card ${ref}`);
  }

  async creditLine(customer: string, signal: AbortSignal): Promise<AcmeReply<{ cents: bigint }>> {
    await this.wire(signal);
    const c = this.state.customers.get(customer);
    return c ? { ok: true, data: { cents: c.limitCents } } : refuse('NO_CUSTOMER', `no customer ${customer}`);
  }

  /** Acme's status rules, in Acme's words. */
  async command(req: CardCommand, signal: AbortSignal): Promise<AcmeReply<AcmeCardView>> {
    await this.wire(signal);
    return this.once(`command:${req.requestKey}`, req.requestKey, () => {
      const card = this.state.cards.get(req.card);
      if (!card) return refuse('NO_CARD', `no card ${req.card}`);
      if (card.status === 'CLOSED') return refuse('ALREADY_CLOSED', `card ${card.ref} is closed for good`);
      switch (req.command) {
        case 'RELEASE':
          if (card.status !== 'HOLD') return refuse('WRONG_STATUS', `card ${card.ref} is ${card.status}, not on HOLD`);
          card.status = 'OPEN';
          break;
        case 'FREEZE':
          if (card.status !== 'OPEN') return refuse('WRONG_STATUS', `card ${card.ref} is ${card.status}, not OPEN`);
          card.status = 'FROZEN';
          break;
        case 'UNFREEZE':
          if (card.status !== 'FROZEN') return refuse('WRONG_STATUS', `card ${card.ref} is ${card.status}, not FROZEN`);
          card.status = 'OPEN';
          break;
        case 'CLOSE':
          card.status = 'CLOSED';
          card.closeReason = req.reason ?? 'CUSTOMER';
          break;
        case 'SHIP_STEP': {
          if (card.kind !== 'PLASTIC' || !card.delivery) return refuse('NOT_PLASTIC', `card ${card.ref} has no plastic to ship`);
          const next = DELIVERY_STEPS[DELIVERY_STEPS.indexOf(card.delivery) + 1];
          if (!next) return refuse('DELIVERED_ALREADY', `card ${card.ref} was received already`);
          card.delivery = next;
          break;
        }
      }
      return { ok: true, data: view(card) };
    });
  }

  async setControls(req: { card: string; controls: unknown; requestKey?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<{ controls: unknown }>> {
    await this.wire(signal);
    return this.once(`controls:${req.requestKey}`, req.requestKey, () => {
      const card = this.state.cards.get(req.card);
      if (!card) return refuse('NO_CARD', `no card ${req.card}`);
      if (card.status === 'CLOSED') return refuse('ALREADY_CLOSED', `card ${card.ref} is closed for good`);
      card.controls = structuredClone(req.controls);
      return { ok: true, data: { controls: structuredClone(req.controls) } };
    });
  }

  /** Acme hands the block to its HSM and keeps only the fact that a PIN was issued. */
  async issuePin(req: { card: string; block: string; format: number; keyId: string; requestKey?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<{ card: string }>> {
    await this.wire(signal);
    return this.once(`pin:${req.requestKey}`, req.requestKey, () => {
      const card = this.state.cards.get(req.card);
      if (!card) return refuse('NO_CARD', `no card ${req.card}`);
      if (card.status === 'CLOSED') return refuse('ALREADY_CLOSED', `card ${card.ref} is closed for good`);
      if (card.kind !== 'PLASTIC') return refuse('NOT_PLASTIC', `card ${card.ref} is virtual: no PIN`);
      card.pinIssued = true;
      return { ok: true, data: { card: card.ref } };
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
