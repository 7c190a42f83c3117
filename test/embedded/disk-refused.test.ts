// The local database on a disk that refuses a write, on the real embedded process: its file size
// limit is lowered while it runs (prlimit; the kernel then answers EFBIG, as it answers ENOSPC on
// a full disk, and Node ignores SIGXFSZ). lmdb-js leaves the process's memory unsound after such a
// failure, so the gateway must stop at once, say why, lose no answered charge, and start again on
// the same data directory with its books in order (docs/durability.md, "A write the disk refuses").

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { balance, chat, fundedAccount, hello, json } from '../support/api';
import { eventually } from '../support/eventually';
import { ADMIN_TOKEN, ROOT, startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(120_000);

const FUNDS = 1_000_000_000_000;

describe('a write the disk refuses, on the embedded host', () => {
  const gateways: GatewayProcess[] = [];
  afterAll(async () => {
    for (const gateway of gateways) await gateway.kill();
  });

  it('then the gateway stops at once with the reason, every answered chat stays charged, and it starts again with no difference', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-disk-refused-')), 'data');
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true', GATEWAY_HOLD_TTL_MS: '3000', GATEWAY_PROVIDER_TIMEOUT_MS: '2000' };
    const first = await startGateway(env);
    gateways.push(first);
    const { apiKey } = await fundedAccount(first.url, FUNDS);
    const one = await chat(first.url, apiKey, { ...hello, max_tokens: 16 });
    expect(one.status).toBe(200);
    // Every such chat costs the same (the simulated provider answers it alike).
    const cost = FUNDS - (await balance(first.url, apiKey)).balance;
    expect(cost).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));

    // From here the database file may grow by 256 KiB at most: about a hundred chats' rows.
    const limit = statSync(join(dataDir, 'gateway.lmdb')).size + 256 * 1024;
    execFileSync('prlimit', ['--pid', String(first.child.pid), `--fsize=${limit}:${limit}`]);
    let answered = 1;
    let refusedAt: number | undefined;
    for (let i = 0; i < 5000 && refusedAt === undefined; i++) {
      const outcome = await chat(first.url, apiKey, { ...hello, max_tokens: 16 }).catch(() => undefined);
      if (outcome?.status === 200) answered++;
      else refusedAt = Date.now();
    }
    expect(refusedAt).toBeDefined();
    expect(answered).toBeGreaterThan(1);

    // It stopped by itself, at once, and said why: the refused write's errno, 27 (EFBIG), or 5
    // (EIO), which LMDB reports for a write the limit cut short.
    expect(await exited).toBe(1);
    expect(Date.now() - refusedAt!).toBeLessThan(5_000);
    const fatal = first.output().split('\n').find((line) => line.includes('the local database could not write'));
    expect(fatal).toMatch(/"level":60/);
    expect(fatal).toMatch(/"code":(27|5)\}.*stopping/);

    // Started again on the same directory (no limit): the chats it answered are charged, each
    // once; the one it did not answer is not (its hold ends with its lease's expiry).
    const second = await startGateway(env, first.port);
    gateways.push(second);
    const settled = await eventually(() => balance(second.url, apiKey), (b) => b.held === 0 && (b.leased ?? 0) === 0, 30_000);
    expect(settled.balance).toBe(FUNDS - answered * cost);
    const reconciliation = await eventually(
      () => json(`${second.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
      (r) => r.status === 200 && r.body.differences.length === 0,
      30_000,
    );
    expect(reconciliation.body.differences).toEqual([]);
    // And it writes again.
    expect((await chat(second.url, apiKey, { ...hello, max_tokens: 16 })).status).toBe(200);
    await second.stop();
  });

  it('when the disk refuses its first write, then the gateway does not start, and says which directory it cannot write', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-disk-refused-start-')), 'data');
    const started = spawnSync('prlimit', ['--fsize=0:0', process.execPath, join(ROOT, 'dist/services/gateway/main.js')], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(started.status).toBe(1);
    expect(started.stderr).toContain(`the data directory ${dataDir} cannot be written (${join(dataDir, 'gateway.lock')}): EFBIG: file too large`);
    // Nothing left behind for the next start to wait on.
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
