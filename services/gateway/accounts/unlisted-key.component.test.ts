// Keys made before keys were listed (their projection only, no Account actor entry): in process,
// on the gateway's real embedded composition, such a key is recorded in its account's actor at its
// first use, so the operator can list and revoke it by id like any other.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../../lib/config';
import { createGateway, listenGateway } from '../app';
import { compose, type Composition } from '../compose';
import { passes } from '../../../test/support/eventually';

let composition: Composition;
let server: Server;
let base: string;
const action = { who: 'admin:test', requestId: 'req-unlisted' };

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'unlisted-key-'));
  composition = await compose(loadConfig({ GATEWAY_DATA_DIR: dir, GATEWAY_LOG_LEVEL: 'silent', GATEWAY_ADMIN_TOKEN: 'x'.repeat(32) }), pino({ level: 'silent' }));
  server = listenGateway(createGateway(composition.deps), 0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await composition?.close();
});

const balance = (apiKey: string) => fetch(`${base}/api/distribution/api-credit/balance`, { headers: { authorization: `Bearer ${apiKey}` } });

describe('a key made before keys were listed', () => {
  it('when it is used, then it is listed in its account with its prefix, and revoking it by id refuses it', async () => {
    const { deps } = composition;
    const account = await deps.operator.createAccount(action, 'legacy');
    const legacy = await deps.accounts.createApiKey(account.accountId, ['compat']);
    expect((await deps.operator.listKeys(account.accountId)).items).toEqual([]);
    expect((await balance(legacy.apiKey)).status).toBe(200);
    await passes(async () => {
      expect((await deps.operator.listKeys(account.accountId)).items).toEqual([
        expect.objectContaining({ apiKeyId: legacy.apiKeyId, prefix: legacy.apiKey.slice(0, 12), scopes: ['compat'], state: 'active' }),
      ]);
    });
    await deps.operator.revokeKey(action, legacy.apiKeyId);
    const refused = await balance(legacy.apiKey);
    expect([refused.status, (await refused.json()).error.message]).toEqual([401, 'this API key has been revoked']);
  });
});
