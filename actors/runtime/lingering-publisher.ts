// The actors app's publishes, gathered for a moment (a producer's linger): every activation hands
// its committed events to pub/sub as they come, and those of one topic handed over within
// `lingerMs` leave as one message (at most MAX_EVENTS_PER_MESSAGE events). Under load one
// publish, one stream entry and one delivery to the ledger then carry the events of many turns
// and many actors, instead of one per turn; a lone turn's events leave `lingerMs` later. Nothing
// waits for it but the outbox's bookkeeping: the events are already committed in the actors'
// stored outboxes, which publish them again should a message be refused or never sent.

import { MAX_EVENTS_PER_MESSAGE, type EventEnvelope, type Topic } from '../../lib/events';
import type { DaprPublisher } from './dapr-host';

interface Gathering {
  events: EventEnvelope[];
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
  timer: NodeJS.Timeout;
}

/** `send` behind a linger of `lingerMs` (0: each call sent as it comes). */
export function lingeringPublisher(send: DaprPublisher, lingerMs: number): DaprPublisher {
  if (lingerMs <= 0) return send;
  const gathering = new Map<Topic, Gathering>();
  const flush = (topic: Topic) => {
    const batch = gathering.get(topic);
    if (!batch) return;
    gathering.delete(topic);
    clearTimeout(batch.timer);
    send(topic, batch.events).then(
      () => batch.waiters.forEach((w) => w.resolve()),
      (error) => batch.waiters.forEach((w) => w.reject(error)),
    );
  };
  return (topic, events) => new Promise<void>((resolve, reject) => {
    if ((gathering.get(topic)?.events.length ?? 0) + events.length > MAX_EVENTS_PER_MESSAGE) flush(topic);
    let batch = gathering.get(topic);
    if (!batch) {
      batch = { events: [], waiters: [], timer: setTimeout(() => flush(topic), lingerMs) };
      gathering.set(topic, batch);
    }
    batch.events.push(...events);
    batch.waiters.push({ resolve, reject });
    if (batch.events.length >= MAX_EVENTS_PER_MESSAGE) flush(topic);
  });
}
