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
  | 'DELIVERED_ALREADY'
  | 'CUSTOMER_EXISTS'
  | 'CARD_STILL_OPEN'
  | 'REISSUED_ALREADY'
  | 'OVERPAYMENT'
  | 'BELOW_OWED'
  | 'NO_SWIPE';

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

type AcmeCard = AcmeCardView & { pinIssued: boolean; reissuedAs?: string };

export type AcmeKind = 'PERSON' | 'COMPANY';
/** Acme keeps a postal address as street lines plus the rest. */
export interface AcmeHome {
  street: string[];
  city: string;
  region: string;
  country: string;
  postcode: string;
}

export interface AcmeCustomer {
  name: string;
  kind: AcmeKind;
  email: string;
  phone: string;
  home: AcmeHome;
  limitCents: bigint;
  /** What the customer owes on its line. */
  owedCents: bigint;
}
export type AcmeCustomerView = AcmeCustomer & { id: string; cards: number };

/** A new customer: its profile and line (nothing owed yet), an id when the caller has one, a first card when asked. */
export type OpenCustomer = Omit<AcmeCustomer, 'owedCents'> & { id?: string | undefined; withCard: boolean; requestKey?: string | undefined };

/** Acme's channels: cash machine, till, web shop, tap to pay. */
export type AcmeChannel = 'CASH' | 'TILL' | 'WEB' | 'TAP';
export type AcmeDecline = 'NOT_OPEN' | 'ABROAD_OFF' | 'CHANNEL_OFF' | 'DAY_AMOUNT' | 'DAY_COUNT' | 'NO_FUNDS';

/** A card swipe Acme decided: `outcome` OK or the decline. */
export interface AcmeSwipe {
  ref: string;
  card: string;
  customer: string;
  cents: bigint;
  channel: AcmeChannel;
  merchant: { name: string; mcc: string; country: string };
  abroad: boolean;
  outcome: 'OK' | AcmeDecline;
  at: string;
}

export interface SwipeRequest {
  card: string;
  cents: bigint;
  channel: AcmeChannel;
  merchant: { name: string; mcc: string; country: string };
  at: string;
  homeCountry: string;
  zone: string;
  requestKey?: string | undefined;
}

/** The spending controls Acme reads from the document Cardline stores (its preferences). */
interface Controls {
  domestic?: ControlGroup;
  international?: ControlGroup;
}
type ControlGroup = { enabled?: boolean } & Partial<Record<'atm' | 'pos' | 'ecom' | 'contactless', { enabled: boolean; dailyLimit?: string; dailyCount?: number }>>;
const CONTROL_OF: Record<AcmeChannel, 'atm' | 'pos' | 'ecom' | 'contactless'> = { CASH: 'atm', TILL: 'pos', WEB: 'ecom', TAP: 'contactless' };

const cents = (amount: string): bigint => {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 100n + BigInt(frac.padEnd(2, '0'));
};
const localDay = (at: string, zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, dateStyle: 'short' }).format(new Date(at));

/** Appends a Luhn check digit. */
function luhn(partial: string): string {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let d = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0 && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return partial + String((10 - (sum % 10)) % 10);
}

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
  customers: Map<string, AcmeCustomer>;
  /** Every swipe, oldest first. */
  swipes: AcmeSwipe[];
  payments: number;
  cards: Map<string, AcmeCard>;
  /** Kit → the customer it is reserved for (null: free) and the card it is on, once used. */
  kits: Map<string, { reservedFor: string | null; card: string | null }>;
}

/** Acme's copy of the demo fixtures the conformance suite assumes. */
export function demoState(): AcmeState {
  const state = emptyState();
  ['ENT-1001', 'ENT-1002', 'ENT-1003'].forEach((customer, i) => {
    state.customers.set(customer, {
      name: `Acme Demo ${i + 1}`,
      kind: 'COMPANY',
      email: `books@acme-demo-${i + 1}.example`,
      phone: `+3519100020${i + 1}`,
      home: { street: [`${i + 1} Acme Road`], city: 'Lisbon', region: 'Lisboa', country: 'PT', postcode: '1000-001' },
      limitCents: 5_000_000n,
      owedCents: 0n,
    });
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
  return { customers: new Map(), cards: new Map(), kits: new Map(), swipes: [], payments: 0 };
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
      if (req.cents < customer.owedCents) return refuse('BELOW_OWED', `the customer owes more than ${req.cents} cents`);
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

  async creditLine(customer: string, signal: AbortSignal): Promise<AcmeReply<{ cents: bigint; owedCents: bigint }>> {
    await this.wire(signal);
    const c = this.state.customers.get(customer);
    return c ? { ok: true, data: { cents: c.limitCents, owedCents: c.owedCents } } : refuse('NO_CUSTOMER', `no customer ${customer}`);
  }

  async openCustomer(req: OpenCustomer, signal: AbortSignal): Promise<AcmeReply<{ customer: AcmeCustomerView; card?: AcmeCardView }>> {
    await this.wire(signal);
    return this.once(`open:${req.requestKey}`, req.requestKey, () => {
      if (req.id !== undefined && this.state.customers.has(req.id)) return refuse('CUSTOMER_EXISTS', `customer ${req.id} exists`);
      if (req.limitCents <= 0n) return refuse('BAD_AMOUNT', 'a credit line must be positive');
      const id = req.id ?? `ACME-C${this.state.customers.size + 1}`;
      const { name, kind, email, phone, home, limitCents } = req;
      this.state.customers.set(id, { name, kind, email, phone, home: structuredClone(home), limitCents, owedCents: 0n });
      const card = req.withCard ? view(this.addCard(id)) : undefined;
      return { ok: true, data: { customer: this.customerView(id)!, ...(card ? { card } : {}) } };
    });
  }

  async customer(id: string, signal: AbortSignal): Promise<AcmeReply<AcmeCustomerView>> {
    await this.wire(signal);
    const found = this.customerView(id);
    return found ? { ok: true, data: found } : refuse('NO_CUSTOMER', `no customer ${id}`);
  }

  async amendCustomer(req: { id: string; email?: string; phone?: string; home?: AcmeHome; requestKey?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<AcmeCustomerView>> {
    await this.wire(signal);
    return this.once(`amend:${req.requestKey}`, req.requestKey, () => {
      const c = this.state.customers.get(req.id);
      if (!c) return refuse('NO_CUSTOMER', `no customer ${req.id}`);
      if (req.email !== undefined) c.email = req.email;
      if (req.phone !== undefined) c.phone = req.phone;
      if (req.home !== undefined) c.home = structuredClone(req.home);
      return { ok: true, data: this.customerView(req.id)! };
    });
  }

  async newCard(req: { customer: string; requestKey?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<AcmeCardView>> {
    await this.wire(signal);
    return this.once(`card:${req.requestKey}`, req.requestKey, () =>
      this.state.customers.has(req.customer) ? { ok: true, data: view(this.addCard(req.customer)) } : refuse('NO_CUSTOMER', `no customer ${req.customer}`),
    );
  }

  /** A closed card's successor: virtual, or plastic on a free kit; the controls carry over. */
  async reissue(req: { card: string; kit?: string | undefined; requestKey?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<AcmeCardView>> {
    await this.wire(signal);
    return this.once(`reissue:${req.requestKey}`, req.requestKey, () => {
      const old = this.state.cards.get(req.card);
      if (!old) return refuse('NO_CARD', `no card ${req.card}`);
      if (old.status !== 'CLOSED') return refuse('CARD_STILL_OPEN', `card ${old.ref} is ${old.status}; close it first`);
      if (old.reissuedAs) return refuse('REISSUED_ALREADY', `card ${old.ref} was reissued as ${old.reissuedAs}`);
      const kit = req.kit === undefined ? undefined : this.state.kits.get(req.kit);
      if (req.kit !== undefined) {
        const refused = this.kitRefusal(req.kit, old.customer);
        if (refused) return refused;
      }
      const card = this.addCard(old.customer);
      if (old.controls !== undefined) card.controls = structuredClone(old.controls);
      if (kit) {
        Object.assign(card, { kind: 'PLASTIC', kit: req.kit, delivery: 'QUEUED' });
        Object.assign(kit, { card: card.ref, reservedFor: old.customer });
      }
      old.reissuedAs = card.ref;
      return { ok: true, data: view(card) };
    });
  }

  /** Acme's authorization host: every swipe is kept, declined or not. */
  async swipe(req: SwipeRequest, signal: AbortSignal): Promise<AcmeReply<AcmeSwipe>> {
    await this.wire(signal);
    return this.once(`swipe:${req.requestKey}`, req.requestKey, () => {
      const card = this.state.cards.get(req.card);
      if (!card) return refuse('NO_CARD', `no card ${req.card}`);
      const customer = this.state.customers.get(card.customer)!;
      const abroad = req.merchant.country !== req.homeCountry;
      const swipe: AcmeSwipe = {
        ref: `SW-${this.state.swipes.length + 1}`,
        card: card.ref,
        customer: card.customer,
        cents: req.cents,
        channel: req.channel,
        merchant: { ...req.merchant },
        abroad,
        outcome: this.decide(card, customer, req, abroad),
        at: req.at,
      };
      this.state.swipes.push(swipe);
      if (swipe.outcome === 'OK') customer.owedCents += req.cents;
      return { ok: true, data: { ...swipe, merchant: { ...swipe.merchant } } };
    });
  }

  async payment(req: { customer: string; cents: bigint; at: string; requestKey?: string | undefined }, signal: AbortSignal): Promise<AcmeReply<{ ref: string; owedCents: bigint; limitCents: bigint }>> {
    await this.wire(signal);
    return this.once(`pay:${req.requestKey}`, req.requestKey, () => {
      const c = this.state.customers.get(req.customer);
      if (!c) return refuse('NO_CUSTOMER', `no customer ${req.customer}`);
      if (req.cents <= 0n) return refuse('BAD_AMOUNT', 'a payment must be positive');
      if (req.cents > c.owedCents) return refuse('OVERPAYMENT', `the customer owes ${c.owedCents} cents`);
      c.owedCents -= req.cents;
      return { ok: true, data: { ref: `PAY-${++this.state.payments}`, owedCents: c.owedCents, limitCents: c.limitCents } };
    });
  }

  /** A customer's swipes, newest first, `max` at a time; `before` is the `more` of the previous page. */
  async swipes(
    q: { customer: string; card?: string | undefined; declined?: boolean | undefined; from?: number; to?: number; before?: string | undefined; max: number },
    signal: AbortSignal,
  ): Promise<AcmeReply<{ items: AcmeSwipe[]; more: string | null }>> {
    await this.wire(signal);
    if (!this.state.customers.has(q.customer)) return refuse('NO_CUSTOMER', `no customer ${q.customer}`);
    if (q.card !== undefined && this.state.cards.get(q.card)?.customer !== q.customer) return refuse('NO_CARD', `no card ${q.card} for ${q.customer}`);
    let end = this.state.swipes.length;
    if (q.before !== undefined) {
      end = this.state.swipes.findIndex((w) => w.ref === q.before && w.customer === q.customer);
      if (end < 0) return refuse('NO_SWIPE', `no swipe ${q.before} for ${q.customer}`);
    }
    const items: AcmeSwipe[] = [];
    for (let i = end - 1; i >= 0 && items.length <= q.max; i--) {
      const w = this.state.swipes[i]!;
      const time = Date.parse(w.at);
      if (w.customer !== q.customer || (q.card !== undefined && w.card !== q.card)) continue;
      if (q.declined !== undefined && q.declined !== (w.outcome !== 'OK')) continue;
      if ((q.from !== undefined && time < q.from) || (q.to !== undefined && time >= q.to)) continue;
      items.push({ ...w, merchant: { ...w.merchant } });
    }
    const page = items.slice(0, q.max);
    return { ok: true, data: { items: page, more: items.length > q.max ? page[page.length - 1]!.ref : null } };
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

  /** Why a kit cannot go on a card of `customer`: unknown, on a card already, or reserved for another. */
  private kitRefusal(ref: string, customer: string): AcmeReply<never> | undefined {
    const kit = this.state.kits.get(ref);
    if (!kit) return refuse('KIT_UNKNOWN', `no kit ${ref}`);
    if (kit.card) return refuse('KIT_USED', `kit ${ref} is on card ${kit.card}`);
    if (kit.reservedFor && kit.reservedFor !== customer) return refuse('KIT_RESERVED', `kit ${ref} is reserved for another customer`);
    return undefined;
  }

  private customerView(id: string): AcmeCustomerView | undefined {
    const c = this.state.customers.get(id);
    if (!c) return undefined;
    const cards = [...this.state.cards.values()].filter((card) => card.customer === id).length;
    return { id, ...structuredClone(c), cards };
  }

  private addCard(customer: string): AcmeCard {
    const n = this.state.cards.size + 1;
    const card: AcmeCard = {
      ref: `AC-${n}`,
      customer,
      kind: 'VIRTUAL',
      status: 'OPEN',
      number: luhn(`51000000000${String(n).padStart(4, '0')}`),
      validThru: '2912',
      securityCode: String(100 + ((n * 37) % 900)),
      pinIssued: false,
    };
    this.state.cards.set(card.ref, card);
    return card;
  }

  /** Acme's rules, in its order: open card, abroad switched on, channel on, the day's amount and count, funds. */
  private decide(card: AcmeCard, customer: AcmeCustomer, req: SwipeRequest, abroad: boolean): 'OK' | AcmeDecline {
    if (card.status !== 'OPEN') return 'NOT_OPEN';
    const group = (card.controls as Controls | undefined)?.[abroad ? 'international' : 'domestic'];
    if (abroad && group?.enabled !== true) return 'ABROAD_OFF';
    const control = group?.[CONTROL_OF[req.channel]];
    // Once a group names a channel it names all that work: one it does not name is off.
    const named = group !== undefined && Object.values(CONTROL_OF).some((c) => group[c] !== undefined);
    if (group?.enabled === false || control?.enabled === false || (named && control === undefined)) return 'CHANNEL_OFF';
    const day = localDay(req.at, req.zone);
    const same = this.state.swipes.filter((w) => w.card === card.ref && w.outcome === 'OK' && w.channel === req.channel && w.abroad === abroad && localDay(w.at, req.zone) === day);
    if (control?.dailyLimit !== undefined && same.reduce((sum, w) => sum + w.cents, 0n) + req.cents > cents(control.dailyLimit)) return 'DAY_AMOUNT';
    if (control?.dailyCount !== undefined && same.length >= control.dailyCount) return 'DAY_COUNT';
    return req.cents > customer.limitCents - customer.owedCents ? 'NO_FUNDS' : 'OK';
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
