// The operator CLI against the real embedded gateway: the same operations as the operator API.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { balance } from '../support/api';
import { ADMIN_TOKEN, ROOT, startGateway, type GatewayProcess } from '../support/processes';

const run = promisify(execFile);

describe('operator CLI', () => {
  let gateway: GatewayProcess;
  const cli = (args: string[], token = ADMIN_TOKEN) =>
    run(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], { env: { ...process.env, GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: token } });

  beforeAll(async () => {
    gateway = await startGateway({ GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'cli-')), 'data') });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('when an account, a key and a credit are made with the CLI, then the key sees the credited balance', async () => {
    const account = JSON.parse((await cli(['accounts', 'create', 'cli-user'])).stdout);
    const key = JSON.parse((await cli(['api-keys', 'create', account.accountId])).stdout);
    expect(key.apiKey).toMatch(/^sk-payg-/);
    const credit = JSON.parse((await cli(['credits', 'add', account.accountId, '1234', 'ref-1'])).stdout);
    expect(credit).toMatchObject({ applied: true, balance: 1234 });
    const again = JSON.parse((await cli(['credits', 'add', account.accountId, '1234', 'ref-1'])).stdout);
    expect(again).toMatchObject({ applied: false, balance: 1234 });
    expect(await balance(gateway.url, key.apiKey)).toMatchObject({ balance: 1234, held: 0 });
  });

  it('when a key is made with --scope flags, then it carries those scopes; an unknown scope exits 1 with invalid_scope and a dangling flag exits 2', async () => {
    const account = JSON.parse((await cli(['accounts', 'create', 'cli-scoped'])).stdout);
    const key = JSON.parse((await cli(['api-keys', 'create', account.accountId, '--scope', 'compat', '--scope', 'media'])).stdout);
    expect(key).toMatchObject({ accountId: account.accountId, scopes: ['compat', 'media'], apiKey: expect.stringMatching(/^sk-payg-/) });
    expect(JSON.parse((await cli(['api-keys', 'create', account.accountId])).stdout)).toMatchObject({ scopes: [] });
    await expect(cli(['api-keys', 'create', account.accountId, '--scope', 'root'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('invalid_scope') });
    await expect(cli(['api-keys', 'create', account.accountId, '--scope'])).rejects.toMatchObject({ code: 2 });
  });

  it('when the token is wrong or the arguments are bad, then the CLI exits 3 or 2 saying why, and changes nothing', async () => {
    // 3: the gateway could not be asked (the token refused), apart from 1, an operation it refused.
    await expect(cli(['accounts', 'create', 'x'], 'wrong-token-wrong-token')).rejects.toMatchObject({ code: 3, stderr: expect.stringContaining('401') });
    await expect(cli(['reconcile'], 'wrong-token-wrong-token')).rejects.toMatchObject({ code: 3, stderr: expect.stringContaining('could not reconcile') });
    // A token no header can carry (a second line pasted in) is refused before anything is sent, and never printed.
    const twoLines = `${ADMIN_TOKEN}\nsecond-line`;
    for (const args of [['accounts', 'list'], ['reconcile']]) {
      const failed = await cli(args, twoLines).then(() => undefined, (error: { code: number; stderr: string; stdout: string }) => error);
      expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('GATEWAY_ADMIN_TOKEN holds a line break') });
      expect(`${failed!.stderr}${failed!.stdout}`).not.toContain(ADMIN_TOKEN);
    }
    await expect(cli(['credits', 'add', 'acct', 'ten', 'ref'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('<amount> must be a whole number') });
    await expect(cli(['credits', 'add', 'acct_missing', '10', 'ref'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('404') });
  });

  it('when an order is created with the CLI, then the owner of the account reads it, created by the operator and not yet credited; bad arguments exit 2, an unknown account 1', async () => {
    const account = JSON.parse((await cli(['accounts', 'create', 'cli-order'])).stdout);
    const key = JSON.parse((await cli(['api-keys', 'create', account.accountId])).stdout);
    const order = JSON.parse((await cli(['orders', 'create', account.accountId, '5000000000'])).stdout);
    expect(order).toMatchObject({ accountId: account.accountId, amount: 5_000_000_000, currency: 'USD', status: 'created', createdBy: 'operator' });
    const read = await fetch(`${gateway.url}/api/consumer/orders/${order.orderId}`, { headers: { authorization: `Bearer ${key.apiKey}` } });
    expect(await read.json()).toEqual(order);
    expect(await balance(gateway.url, key.apiKey)).toMatchObject({ balance: 0 });
    await expect(cli(['orders', 'create', account.accountId, '5.5'])).rejects.toMatchObject({ code: 2 });
    await expect(cli(['orders', 'create', account.accountId])).rejects.toMatchObject({ code: 2 });
    await expect(cli(['orders', 'create', account.accountId, '0'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('400') });
    await expect(cli(['orders', 'create', 'acct_missing', '10'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('404') });
  });
});
