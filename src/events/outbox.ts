// Events of record: each is checked against its type's closed schema here, written by the audit writer in its
// audit record's own statement (the transactional outbox, src/audit/writer.ts) and delivered from there by
// src/notify/deliveries.ts.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { EVENT_AGGREGATE, EVENT_PAYLOADS, EVENT_TYPES, type EventType } from '../../schemas/events.js';

/** An event as the audit writer takes it: the id, sequence and time come from the batch. */
export interface DomainEvent {
  type: EventType;
  aggregateId: string;
  payload: Record<string, unknown>;
}

const checkers = new Map(EVENT_TYPES.map((t) => [t, TypeCompiler.Compile(EVENT_PAYLOADS[t])]));

/** A route's event could not be built: a programming error, never the caller's. */
export class EventPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventPayloadError';
  }
}

/** Checks a payload against its closed schema (no PAN, CVV, PIN block or address can enter the outbox). */
export function domainEvent(type: EventType, payload: unknown): DomainEvent {
  const checker = checkers.get(type);
  if (!checker) throw new EventPayloadError(`unknown event type '${type}'`);
  if (!checker.Check(payload)) {
    const first = checker.Errors(payload).First();
    throw new EventPayloadError(`event '${type}': ${first ? `${first.path || '/'} ${first.message}` : 'invalid payload'}`);
  }
  const p = payload as Record<string, unknown>;
  return { type, aggregateId: String(p[EVENT_AGGREGATE[type]]), payload: p };
}
