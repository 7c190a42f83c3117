// The ImageTask contract on the embedded host, with a real local database, the real FundsHold and
// ledger beside it, and a real restart (host and database closed and opened again).

import { imageTaskContract } from '../../test/contract/image-task.contract';
import { startEmbeddedActors } from '../../test/support/actor-hosts';

jest.setTimeout(30_000);

imageTaskContract('embedded', () => startEmbeddedActors('image-task-'), { deadlineMs: 1000 });
