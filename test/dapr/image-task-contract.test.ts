// The ImageTask contract against the actors app through a real daprd sidecar: Redis actor state,
// Scheduler reminders (the UNKNOWN_IMAGE_V1 deadline), FundsHold called actor to actor, Redis
// Streams pub/sub to the ledger. The restart case restarts the actors app and its sidecar.

import { imageTaskContract } from '../contract/image-task.contract';
import { startDaprActors } from '../support/actor-hosts';

jest.setTimeout(180_000);

imageTaskContract('Dapr', () => startDaprActors('image-dapr-', 27000), { deadlineMs: 2000 });
