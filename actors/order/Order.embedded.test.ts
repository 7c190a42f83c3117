// The Order contract on the embedded host, with a real local database, the real FundsHold and
// ledger beside it, and a real restart (host and database closed and opened again).

import { orderContract } from '../../test/contract/order.contract';
import { startEmbeddedActors } from '../../test/support/actor-hosts';

jest.setTimeout(60_000);

orderContract('embedded', () => startEmbeddedActors('order-'));
