// The one subscriber module: every topic's events go to the ledger, idempotently by id.
// Dapr acknowledges whatever we answer, so the status is always explicit.

import type { Logger } from 'pino';
import { parseEvent, PoisonedEvent, type LedgerStore } from './entries';

export type DeliveryStatus = 'SUCCESS' | 'RETRY' | 'DROP';

export function createEventHandler(store: LedgerStore, logger?: Logger) {
  return async function handleEvent(raw: unknown): Promise<DeliveryStatus> {
    try {
      const event = parseEvent(raw);
      const outcome = await store.append(event);
      if (outcome === 'duplicate') logger?.debug({ eventId: event.id }, 'duplicate delivery ignored');
      return 'SUCCESS';
    } catch (error) {
      if (error instanceof PoisonedEvent) {
        logger?.error({ err: error.message }, 'poisoned event dropped');
        return 'DROP';
      }
      logger?.warn({ err: (error as Error).message }, 'event not stored; redelivery requested');
      return 'RETRY';
    }
  };
}
