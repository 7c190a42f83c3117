// Typed client of the Journal actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { JOURNAL_ACTOR_TYPE, JOURNAL_METHODS, type JournalApi } from './JournalInterface';

export class JournalClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(journal: string): JournalApi {
    return actorProxy<JournalApi>(this.actors, JOURNAL_ACTOR_TYPE, journal, JOURNAL_METHODS);
  }
}
