// Hold expiry against the actors app behind a real daprd sidecar (Scheduler reminders): the
// actors app is killed across a hold's expiry and started again.

import { holdExpiryContract } from '../contract/hold-expiry.contract';
import { startDaprActors } from '../support/actor-hosts';

jest.setTimeout(240_000);

holdExpiryContract('Dapr', () => startDaprActors('hold-expiry-dapr-', 15000));
