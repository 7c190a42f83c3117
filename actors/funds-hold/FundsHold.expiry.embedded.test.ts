// Hold expiry on the embedded host with a real local database, closed and opened again across
// a hold's expiry.

import { holdExpiryContract } from '../../test/contract/hold-expiry.contract';
import { startEmbeddedActors } from '../../test/support/actor-hosts';

jest.setTimeout(120_000);

holdExpiryContract('embedded', () => startEmbeddedActors('hold-expiry-'));
