// The gateway's real composition on the embedded host, in this process (LMDB in a temporary
// folder, the simulated provider), for component tests that call a use case directly: funded
// accounts, their pool-3 balance, and a use case's input as a route would build it.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DEFAULT_POOL } from '../../actors/funds-hold/FundsHoldInterface';
import { loadConfig } from '../../lib/config';
import type { ChatInput } from '../../services/gateway/chat/prepare';
import { compose, type Composition } from '../../services/gateway/compose';
import type { Drain } from '../../services/gateway/drain';

export interface InProcessGateway {
  composition: Composition;
  /** A new account with `amount` nano-USD in pool-3. */
  funded(amount: number): Promise<string>;
  balance(accountId: string): ReturnType<ReturnType<Composition['deps']['funds']['of']>['getBalance']>;
  /** A use case's input: an API key's call on `modelId` with `body`, paid from pool-3. */
  input(accountId: string, modelId: string, body: unknown, extra?: Partial<ChatInput>): ChatInput;
}

export async function inProcessGateway(name: string, env: Record<string, string> = {}, drain?: Drain): Promise<InProcessGateway> {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const composition = await compose(loadConfig({ GATEWAY_DATA_DIR: dir, GATEWAY_LOG_LEVEL: 'silent', ...env }), pino({ level: 'silent' }), drain);
  const funds = composition.deps.funds;
  let accounts = 0;
  return {
    composition,
    funded: async (amount) => {
      const accountId = `acct_${name.replace(/\W/g, '_')}_${++accounts}`;
      await funds.of(accountId, DEFAULT_POOL).credit({ amount, reference: 'start' });
      return accountId;
    },
    balance: (accountId) => funds.of(accountId, DEFAULT_POOL).getBalance(),
    input: (accountId, modelId, body, extra = {}) => ({
      modelId, body, bodyBytes: Buffer.byteLength(JSON.stringify(body)),
      caller: { family: 'api_key', accountId, apiKeyId: 'key_component', scopes: new Set() },
      requestId: `req-${accounts}-${Math.random()}`, pool: DEFAULT_POOL, capabilities: [], ...extra,
    }),
  };
}
