// The Order contract against the actors app through a real daprd sidecar: Redis actor state,
// Scheduler reminders (the fulfil retry), FundsHold credited actor to actor, Redis Streams
// pub/sub to the ledger. The restart case restarts the actors app and its sidecar.

import { orderContract } from '../contract/order.contract';
import { startDaprActors } from '../support/actor-hosts';

jest.setTimeout(180_000);

orderContract('Dapr', () => startDaprActors('order-dapr-', 30_000));
