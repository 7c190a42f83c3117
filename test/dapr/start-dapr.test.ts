// `npm run start:dapr` as a user runs it: the whole topology comes up, serves, and SIGTERM
// stops every process it started.

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, ROOT, waitFor } from '../support/processes';
import { alive, descendants } from '../support/process-tree';

jest.setTimeout(120_000);

describe('npm run start:dapr', () => {
  it('when started, then the gateway answers on PORT; when sent SIGTERM, then it exits 0 and leaves no process behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'start-dapr-'));
    let output = '';
    const child = spawn(process.execPath, [join(ROOT, 'dist/topology/start-dapr.js')], {
      cwd: ROOT,
      env: { ...process.env, PORT: '26000', GATEWAY_DAPR_BASE_PORT: '26000', GATEWAY_DATA_DIR: dir, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    // A failed check must not leave the topology running (it would keep the test run alive).
    const stopOnFailure = () => {
      if (child.exitCode === null) child.kill('SIGTERM');
    };
    try {
      await check();
    } finally {
      stopOnFailure();
    }
    async function check() {
      await waitFor('http://127.0.0.1:26000/readyz', 90_000, child, () => output);
      const ready = await (await fetch('http://127.0.0.1:26000/readyz')).json();
      expect(ready).toEqual({
        status: 'ready',
        checks: { sidecar: true, statestore: true, actors: true, ledger: true },
        // The catalog in force, and the default catalog's one upstream with its circuit closed.
        catalog: { version: expect.stringMatching(/^[0-9a-f]{12}$/), loaded_at: expect.any(String) },
        upstreams: { sim: { state: 'closed', consecutive_failures: 0, open_until: null } },
      });
      const started = descendants(child.pid!).map((p) => p.pid);
      expect(started.length).toBeGreaterThanOrEqual(8); // redis, placement, scheduler, 3 apps, 3 sidecars
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(started.filter(alive)).toEqual([]);
    }
  });
});
