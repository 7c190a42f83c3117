// The one subscriber module: every topic's events go to the ledger, idempotently by id.
// Dapr acknowledges whatever we answer, so the status is always explicit.

import type { Logger } from 'pino';
import { metrics } from '../../lib/metrics';
import { parseEvent, PoisonedEvent, type LedgerStore } from './entries';

export type DeliveryStatus = 'SUCCESS' | 'RETRY' | 'DROP';

export function createEventHandler(store: LedgerStore, logger?: Logger) {
  return async function handleEvent(raw: unknown): Promise<DeliveryStatus> {
    const topic = topicOf(raw);
    try {
      const event = parseEvent(raw);
      const outcome = await store.append(event);
      metrics.ledgerEvent(topic, outcome);
      if (outcome === 'duplicate') logger?.debug({ eventId: event.id }, 'duplicate delivery ignored');
      return 'SUCCESS';
    } catch (error) {
      if (error instanceof PoisonedEvent) {
        metrics.ledgerEvent(topic, 'dropped');
        logger?.error({ err: error.message }, 'poisoned event dropped');
        return 'DROP';
      }
      metrics.ledgerEvent(topic, 'retry');
      logger?.warn({ err: (error as Error).message }, 'event not stored; redelivery requested');
      return 'RETRY';
    }
  };
}

/** The topic an event says it has, even one that fails validation (the label is bounded in lib/metrics.ts). */
function topicOf(raw: unknown): string {
  const topic = typeof raw === 'object' && raw !== null ? (raw as { topic?: unknown }).topic : undefined;
  return typeof topic === 'string' ? topic : 'other';
}
