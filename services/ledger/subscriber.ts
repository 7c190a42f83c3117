// The one subscriber module: every topic's events go to the ledger, idempotently by id.
// Dapr acknowledges whatever we answer, so the status is always explicit.

import type { Logger } from 'pino';
import { metrics } from '../../lib/metrics';
import type { EventEnvelope } from '../../lib/events';
import { parseEvent, PoisonedEvent, type LedgerStore } from './entries';

export type DeliveryStatus = 'SUCCESS' | 'RETRY' | 'DROP';

/**
 * Handles the events of one delivery, in their order, with one store call: a poisoned event is
 * dropped alone (DROP), the others are appended together (SUCCESS, a duplicate too) or, when the
 * store fails, all asked for again (RETRY). Never throws.
 */
export function createEventHandler(store: LedgerStore, logger?: Logger) {
  return async function handleEvents(raws: readonly unknown[]): Promise<DeliveryStatus[]> {
    const statuses = new Array<DeliveryStatus>(raws.length);
    const valid: EventEnvelope[] = [];
    const positions: number[] = [];
    for (let i = 0; i < raws.length; i++) {
      try {
        valid.push(parseEvent(raws[i]));
        positions.push(i);
      } catch (error) {
        const poisoned = error instanceof PoisonedEvent;
        metrics.ledgerEvent(topicOf(raws[i]), poisoned ? 'dropped' : 'retry');
        if (poisoned) logger?.error({ err: error.message }, 'poisoned event dropped');
        else logger?.warn({ err: (error as Error).message }, 'event not read; redelivery requested');
        statuses[i] = poisoned ? 'DROP' : 'RETRY';
      }
    }
    if (valid.length === 0) return statuses;
    try {
      const outcomes = await store.appendAll(valid);
      for (let k = 0; k < valid.length; k++) {
        metrics.ledgerEvent(valid[k].topic, outcomes[k]);
        if (outcomes[k] === 'duplicate') logger?.debug({ eventId: valid[k].id }, 'duplicate delivery ignored');
        statuses[positions[k]] = 'SUCCESS';
      }
    } catch (error) {
      for (let k = 0; k < valid.length; k++) {
        metrics.ledgerEvent(valid[k].topic, 'retry');
        statuses[positions[k]] = 'RETRY';
      }
      logger?.warn({ err: (error as Error).message, events: valid.length }, 'events not stored; redelivery requested');
    }
    return statuses;
  };
}

/** The topic an event says it has, even one that fails validation (the label is bounded in lib/metrics.ts). */
function topicOf(raw: unknown): string {
  const topic = typeof raw === 'object' && raw !== null ? (raw as { topic?: unknown }).topic : undefined;
  return typeof topic === 'string' ? topic : 'other';
}
