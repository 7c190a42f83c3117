// The host-level outbox methods (port.ts) of any actor, over any ActorInvoker: reconciliation
// reads which events an actor emitted that the ledger lacks, and its repair delivers them.

import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorInvoker, type OutboxDelivery, type OutboxPending } from './port';

export class ActorOutboxClient {
  constructor(private readonly actors: ActorInvoker) {}

  pending(actorType: string, actorId: string): Promise<OutboxPending> {
    return this.actors.invoke<OutboxPending>(actorType, actorId, OUTBOX_PENDING_METHOD, {});
  }

  deliver(actorType: string, actorId: string): Promise<OutboxDelivery> {
    return this.actors.invoke<OutboxDelivery>(actorType, actorId, OUTBOX_DELIVER_METHOD, {});
  }
}
