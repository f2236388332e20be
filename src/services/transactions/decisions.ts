// Tenants' real-time decision endpoints (decision 0338): one signed POST per authorization, answered within the
// tenant's deadline or replaced by its stand-in; a late answer is still read for a while, and one that differs from
// the stand-in is recorded with `authorization.decision-late`. Each tenant has its own bound of calls in flight, so a
// slow endpoint never holds another tenant's authorizations.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Agent, Dispatcher } from 'undici';
import type { AuthorizationAsk, StandInCause } from '../../../schemas/authorizations.js';
import { DECISION_ANSWER_MAX_BYTES, DecisionAnswer, type DecisionRequest } from '../../../schemas/authorizations.js';
import { DECISION_DEADLINE_DEFAULT_MS, DECISION_DEADLINE_MAX_MS, type DecisionEndpointConfig } from '../../../schemas/tenant.js';
import type { DeclineReason } from '../../../schemas/transactions.js';
import { fromMinor, toMinor } from '../../../connectors/shared/money.js';
import type { DecisionsConfig } from '../../config.js';
import type { AuditWriter, WriterEntry } from '../../audit/writer.js';
import type { DecisionObserver } from '../infrastructure/metrics.js';
import { domainEvent, type DomainEvent } from '../../events/outbox.js';
import { addressRefusal, checkTarget, checkUrlForm, checkedLookup, hostOf, TargetRefused, type Resolver, type TargetPolicy } from '../../notify/addresses.js';
import { sign } from '../../notify/webhook.js';

/** What the endpoint is asked about: the authorization, the id it will have, and whether a partial answer may be given. */
export interface DecisionAsk extends AuthorizationAsk {
  authorizationId: string;
  partialApproval: boolean;
}

/** A valid answer: approved (for the whole amount, or `approvedMinor`), or declined with a reason. */
export type DecisionAnswered = { approved: true; approvedMinor: bigint | null } | { approved: false; declineReason: DeclineReason };

export interface LateAnswer {
  answer: DecisionAnswered;
  /** How long after the deadline it came. */
  lateByMs: number;
}

export type Decision =
  | { kind: 'answered'; answer: DecisionAnswered }
  /** `late`: the call still under way after a timeout, resolving to its answer or null (an error, or no answer in the window). */
  | { kind: 'stand-in'; cause: StandInCause; detail: string; late: Promise<LateAnswer | null> | null };

/** An answer that is not one: the reason is kept on the trail (short, never the body). */
class InvalidAnswer extends Error {}

const answerCheck = TypeCompiler.Compile(DecisionAnswer);

/** Reads the answer: 200, JSON, at most DECISION_ANSWER_MAX_BYTES, the schema, and amounts that fit the ask. */
async function readAnswer(res: Dispatcher.ResponseData, ask: DecisionAsk): Promise<DecisionAnswered> {
  if (res.statusCode !== 200) {
    await res.body.dump({ limit: DECISION_ANSWER_MAX_BYTES }).catch(() => undefined);
    throw new InvalidAnswer(`HTTP ${res.statusCode}`);
  }
  const type = String(res.headers['content-type'] ?? '');
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    await res.body.dump({ limit: DECISION_ANSWER_MAX_BYTES }).catch(() => undefined);
    throw new InvalidAnswer('the answer is not application/json');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > DECISION_ANSWER_MAX_BYTES) {
      res.body.destroy();
      throw new InvalidAnswer(`the answer is longer than ${DECISION_ANSWER_MAX_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new InvalidAnswer('the answer is not JSON');
  }
  if (!answerCheck.Check(body)) {
    const first = answerCheck.Errors(body).First();
    throw new InvalidAnswer(`invalid answer: ${first ? `${first.path || '/'} ${first.message}` : 'not an answer'}`.slice(0, 120));
  }
  if (!body.approved) {
    if (body.approvedAmount !== undefined) throw new InvalidAnswer('invalid answer: approvedAmount with approved false');
    return { approved: false, declineReason: body.declineReason ?? 'DO_NOT_HONOUR' };
  }
  if (body.declineReason !== undefined) throw new InvalidAnswer('invalid answer: declineReason with approved true');
  if (body.approvedAmount === undefined) return { approved: true, approvedMinor: null };
  const approvedMinor = toMinor(body.approvedAmount);
  const amountMinor = toMinor(ask.amount);
  if (approvedMinor <= 0n || approvedMinor > amountMinor) throw new InvalidAnswer(`invalid answer: approvedAmount ${body.approvedAmount} is not above 0 and at most ${ask.amount}`);
  if (approvedMinor < amountMinor && !ask.partialApproval) throw new InvalidAnswer('invalid answer: a partial approval, and the tenant allows none');
  return { approved: true, approvedMinor: approvedMinor === amountMinor ? null : approvedMinor };
}

/** An error as kept on the trail: short, one line; never a secret (none is in scope) nor the answer's body. */
function describe(err: unknown): string {
  if (err instanceof InvalidAnswer) return err.message;
  const e = err as { name?: string; code?: string; message?: string; cause?: { name?: string; code?: string; message?: string } };
  if (e?.name === 'TargetRefused' || e?.cause?.name === 'TargetRefused') return `refused: ${e.cause?.message ?? e.message}`;
  const code = e?.cause?.code ?? e?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return (code ? `${code}: ${message}` : message).replace(/\s+/g, ' ').slice(0, 120);
}

const GIVEN_UP = Object.assign(new Error('the decision call was given up'), { name: 'AbortError' });

/** Aborts a call without formatting stacks nobody reads (undici's error, the socket's destroy; decision 0381). */
function abort(controller: AbortController): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    controller.abort(GIVEN_UP);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Whether an answer says what the stand-in said: both decline, or both approve the whole amount. */
const sameAsStandIn = (answer: DecisionAnswered, standIn: DecisionEndpointConfig['standIn']): boolean =>
  answer.approved ? standIn === 'approve' && answer.approvedMinor === null : standIn === 'decline';

export interface DecisionServiceOptions {
  config: DecisionsConfig;
  /** The webhooks' allow-list: the same address policy (decision 0082). */
  allowHosts: readonly string[];
  audit: AuditWriter;
  log: { warn(obj: object, msg: string): void };
  observer?: DecisionObserver;
  /** Tests resolve names their own way; the default is the system's resolver. */
  resolve?: Resolver;
}

type Pools = { agents: Record<'production' | 'sandbox', Agent>; request: typeof import('undici').request };

export class DecisionService {
  /** Calls in flight per tenant, late ones included: the bound that keeps one tenant's endpoint from holding others. */
  private readonly inFlight = new Map<string, number>();
  /** Late answers still awaited, with their reconciliation (tests and close wait for them). */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly calls = new Set<AbortController>();
  private closed = false;
  private agents: Promise<Pools> | null = null;

  constructor(private readonly opts: DecisionServiceOptions) {}

  policy(sandbox: boolean): TargetPolicy {
    return { sandbox, allowHosts: this.opts.allowHosts, targets: 'decision endpoints' };
  }

  /** Checks an endpoint's URL as a configuration is saved (its form, every resolved address); throws TargetRefused. */
  async checkUrl(url: string, sandbox: boolean): Promise<void> {
    await checkTarget(url, this.policy(sandbox), this.opts.resolve);
  }

  /** One undici pool per policy, made with the first call; the per-request signal bounds each call. */
  private pools(): Promise<Pools> {
    const longest = DECISION_DEADLINE_MAX_MS + this.opts.config.lateWindowMs;
    this.agents ??= import('undici').then(({ Agent, request }) => {
      const agent = (policy: TargetPolicy) =>
        new Agent({
          connect: { lookup: checkedLookup(policy, this.opts.resolve) as never, timeout: DECISION_DEADLINE_MAX_MS },
          headersTimeout: longest,
          bodyTimeout: longest,
          keepAliveTimeout: 4_000,
        });
      return { agents: { production: agent(this.policy(false)), sandbox: agent(this.policy(true)) }, request };
    });
    return this.agents;
  }

  /** Asks the tenant's endpoint, waiting at most its deadline; the stand-in's cause and detail otherwise. */
  async decide(tenantId: string, sandbox: boolean, endpoint: DecisionEndpointConfig, ask: DecisionAsk): Promise<Decision> {
    const decision = await this.ask(tenantId, sandbox, endpoint, ask);
    this.opts.observer?.decisionCall(tenantId, decision.kind === 'answered' ? (decision.answer.approved ? 'approved' : 'declined') : decision.cause);
    return decision;
  }

  private async ask(tenantId: string, sandbox: boolean, endpoint: DecisionEndpointConfig, ask: DecisionAsk): Promise<Decision> {
    const deadlineMs = endpoint.deadlineMs ?? DECISION_DEADLINE_DEFAULT_MS;
    const busy = this.inFlight.get(tenantId) ?? 0;
    if (busy >= this.opts.config.concurrency) {
      return { kind: 'stand-in', cause: 'busy', detail: `busy: ${busy} calls in flight`, late: null };
    }
    this.inFlight.set(tenantId, busy + 1);
    const started = performance.now();
    const controller = new AbortController();
    this.calls.add(controller);
    if (this.closed) abort(controller);
    let timer: NodeJS.Timeout | undefined;
    const call = this.call(sandbox, endpoint, ask, deadlineMs, controller.signal).finally(() => {
      clearTimeout(timer);
      this.calls.delete(controller);
      const left = (this.inFlight.get(tenantId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(tenantId, left);
      else this.inFlight.delete(tenantId);
    });
    const lateWindowMs = this.opts.config.lateWindowMs;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout');
        if (lateWindowMs > 0) timer = setTimeout(() => abort(controller), lateWindowMs);
        else abort(controller);
      }, deadlineMs);
    });
    const first = await Promise.race([call.then((answer) => ({ answer }), (error: unknown) => ({ error })), timedOut]);
    // A call aborted at its own limit as the deadline passes (a late window of 0) timed out all the same.
    if (first === 'timeout' || ('error' in first && performance.now() - started >= deadlineMs)) {
      const late = call.then(
        (answer) => ({ answer, lateByMs: Math.max(0, Math.round(performance.now() - started - deadlineMs)) }),
        () => null,
      );
      return { kind: 'stand-in', cause: 'timeout', detail: `no answer within ${deadlineMs} ms`, late };
    }
    if ('error' in first) return { kind: 'stand-in', cause: 'error', detail: describe(first.error), late: null };
    return { kind: 'answered', answer: first.answer };
  }

  private async call(sandbox: boolean, endpoint: DecisionEndpointConfig, ask: DecisionAsk, deadlineMs: number, signal: AbortSignal): Promise<DecisionAnswered> {
    const policy = this.policy(sandbox);
    // The form again (the policy may have changed since it was saved), and literal addresses, which skip the lookup.
    const url = checkUrlForm(endpoint.url, policy);
    const host = hostOf(url);
    if (isIP(host)) {
      const refusal = addressRefusal(host, host, policy);
      if (refusal) throw new TargetRefused(refusal);
    }
    const request: DecisionRequest = {
      type: 'authorization.decision',
      authorizationId: ask.authorizationId,
      cardId: ask.cardId,
      amount: ask.amount,
      currency: ask.currency,
      merchant: ask.merchant,
      channel: ask.channel,
      networkReference: ask.networkReference,
      partialApproval: ask.partialApproval,
      at: ask.at.toISOString(),
      deadline: new Date(Date.now() + deadlineMs).toISOString(),
    };
    const body = JSON.stringify(request);
    const timestamp = Math.floor(Date.now() / 1000);
    const { agents, request: send } = await this.pools();
    const res = await send(url, {
      method: 'POST',
      dispatcher: agents[sandbox ? 'sandbox' : 'production'],
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': 'Cardline-Decisions/1',
        'webhook-id': ask.authorizationId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(endpoint.secret, ask.authorizationId, timestamp, body),
      },
      body,
      signal,
    });
    return readAnswer(res, ask);
  }

  /**
   * After the authorization is recorded: a late answer that differs from the stand-in is recorded on the tenant's
   * trail with `authorization.decision-late`, so that the bank can reconcile.
   */
  reconcile(
    tenantId: string,
    standIn: DecisionEndpointConfig['standIn'],
    authorization: { id: string; cardId: string; status: 'APPROVED' | 'DECLINED'; amountMinor: bigint },
    late: Promise<LateAnswer | null>,
  ): void {
    const done = late
      .then(async (got) => {
        if (!got || sameAsStandIn(got.answer, standIn)) return;
        const { answer } = got;
        await this.record(
          tenantId,
          authorization,
          domainEvent('authorization.decision-late', {
            authorizationId: authorization.id,
            cardId: authorization.cardId,
            status: authorization.status,
            standIn,
            approved: answer.approved,
            declineReason: answer.approved ? null : answer.declineReason,
            approvedAmount: answer.approved ? fromMinor(answer.approvedMinor ?? authorization.amountMinor) : null,
            lateByMs: got.lateByMs,
          }),
        );
      })
      .catch((err: unknown) => this.opts.log.warn({ tenant: tenantId, authorizationId: authorization.id, reason: describe(err) }, 'late decision not recorded'))
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /**
   * A timed-out stand-in's record, `authorization.decision-timed-out` (decision 0353; errors and busy stand-ins have
   * none), appended by the statement that appends the authorization's own, just before it (decision 0381).
   */
  timeoutRecord(
    tenantId: string,
    endpoint: DecisionEndpointConfig,
    authorization: { id: string; cardId: string; status: 'APPROVED' | 'DECLINED'; amountMinor: bigint; currency: string },
  ): WriterEntry {
    return this.entry(
      tenantId,
      authorization,
      domainEvent('authorization.decision-timed-out', {
        authorizationId: authorization.id,
        cardId: authorization.cardId,
        amount: fromMinor(authorization.amountMinor),
        currency: authorization.currency,
        status: authorization.status,
        standIn: endpoint.standIn,
        deadlineMs: endpoint.deadlineMs ?? DECISION_DEADLINE_DEFAULT_MS,
      }),
    );
  }

  /** Where no record of the request's follows at once: the timeout's record alone, once the row is stored; a failure is logged. */
  async recordTimeout(entry: WriterEntry): Promise<void> {
    await this.opts.audit.record(entry).catch((err: unknown) =>
      this.opts.log.warn({ tenant: entry.tenantId, authorizationId: entry.target['authorizationId'], reason: describe(err) }, 'decision timeout not recorded'),
    );
  }

  /** An event of the decision endpoint's, on the tenant's audit trail with its own record (no caller: the gateway's). */
  private entry(tenantId: string, authorization: { id: string; cardId: string }, event: DomainEvent): WriterEntry {
    return {
      tenantId,
      at: new Date(),
      actor: null,
      role: null,
      action: event.type,
      method: 'POST',
      route: '/v1/authorizations',
      target: { authorizationId: authorization.id, cardId: authorization.cardId },
      outcome: 'succeeded',
      status: 200,
      requestId: randomUUID(),
      origin: null,
      event,
    };
  }

  private record(tenantId: string, authorization: { id: string; cardId: string }, event: DomainEvent): Promise<void> {
    return this.opts.audit.record(this.entry(tenantId, authorization, event));
  }

  /** Resolves when every late answer awaited now has come (or its window passed) and was reconciled. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.calls) abort(controller);
    await this.idle();
    if (!this.agents) return;
    const { agents } = await this.agents;
    await Promise.all([agents.production.close(), agents.sandbox.close()]);
  }
}
