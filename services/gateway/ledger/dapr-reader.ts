// The ledger's reads in the Dapr topology: service invocation of the ledger app through this
// gateway's sidecar. Pages are small JSON answers; exports and balances are relayed as streams
// (never buffered here), so the gateway's memory does not grow with the ledger.

import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { DaprSidecar } from '../../../lib/dapr-http';
import { GatewayError } from '../../../lib/errors';
import type { LedgerBalance, LedgerTotals } from '../../ledger/balances';
import type { ConsolePage } from '../../ledger/console';
import { exportQueryString, pageQueryString, spendingQueryString } from '../../ledger/console-query';
import type { SpendingAnswer } from '../../ledger/spending';
import type { LedgerReader } from './reader';

export function daprLedgerReader(sidecar: DaprSidecar, ledgerAppId: string): LedgerReader {
  const method = (path: string) => `/v1.0/invoke/${encodeURIComponent(ledgerAppId)}/method/${path}`;
  const accountPath = (accountId: string, pool: string) => `accounts/${encodeURIComponent(accountId)}/pools/${encodeURIComponent(pool)}`;

  /** A stream answer's body when it is 200; otherwise the ledger's error, drained. */
  const streamed = async (path: string): Promise<Readable> => {
    const answer = await sidecar.stream(method(path));
    if (answer.status === 200) return answer.body;
    throw failure(answer.status, await answer.body.text().catch(() => ''));
  };

  return {
    async page(kind, accountId, pool, query) {
      const { status, json } = await sidecar.request('GET', method(`${accountPath(accountId, pool)}/${kind}/page?${pageQueryString(query)}`));
      if (status !== 200) throw failure(status, json);
      return json as ConsolePage;
    },
    async spending(accountId, pool, query) {
      const { status, json } = await sidecar.request('GET', method(`${accountPath(accountId, pool)}/spending?${spendingQueryString(query)}`));
      if (status !== 200) throw failure(status, json);
      return json as SpendingAnswer;
    },
    export: (kind, accountId, pool, query) => streamed(`${accountPath(accountId, pool)}/${kind}/export?${exportQueryString(query)}`),
    async register(accountId, pool) {
      const { status, json } = await sidecar.request('PUT', method(accountPath(accountId, pool)));
      if (status !== 204 && status !== 200) throw failure(status, json);
    },
    async totals(accountId, pool) {
      const { status, json } = await sidecar.request('GET', method(accountPath(accountId, pool)));
      if (status !== 200) throw failure(status, json);
      const { balance, bills, fundsBills } = json as LedgerTotals;
      return { balance, bills, ...(fundsBills !== undefined ? { fundsBills } : {}) };
    },
    async balancesAt(accountId, pool, from, to) {
      const { status, json } = await sidecar.request('GET', method(`${accountPath(accountId, pool)}/balances?from=${from}&to=${to}`));
      if (status !== 200) throw failure(status, json);
      return (json as { balances: number[] }).balances;
    },
    async *balances() {
      const body = await streamed('balances');
      for await (const line of createInterface({ input: body, crlfDelay: Infinity })) {
        if (line.length > 0) yield JSON.parse(line) as LedgerBalance;
      }
    },
  };
}

/** The ledger's own 4xx (a query it refused) comes back as it is; anything else means it is unavailable. */
function failure(status: number, body: unknown): GatewayError {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      /* not JSON */
    }
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown; param?: unknown } } | undefined)?.error;
  if (status >= 400 && status < 500 && error && GatewayError.isCode(error.code)) {
    return new GatewayError(error.code, String(error.message), { param: typeof error.param === 'string' ? error.param : undefined });
  }
  return new GatewayError('ledger_unavailable', `the ledger answered ${status}`);
}
