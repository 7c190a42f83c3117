// Small HTTP helpers for end-to-end tests: the operator API and the open routes.

import { ADMIN_TOKEN } from './processes';

export async function json(url: string, init: RequestInit & { body?: string } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: response.status, body, headers: response.headers };
}

export function admin(base: string, path: string, body: unknown) {
  return json(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

export async function fundedAccount(base: string, amount: number): Promise<{ accountId: string; apiKey: string }> {
  const account = await admin(base, '/admin/v1/accounts', { name: 'test' });
  if (account.status !== 201) throw new Error(`account: ${account.status} ${JSON.stringify(account.body)}`);
  const key = await admin(base, `/admin/v1/accounts/${account.body.accountId}/api-keys`, {});
  if (amount > 0) {
    const credit = await admin(base, `/admin/v1/accounts/${account.body.accountId}/credits`, { amount, reference: 'initial' });
    if (credit.status !== 200) throw new Error(`credit: ${credit.status} ${JSON.stringify(credit.body)}`);
  }
  return { accountId: account.body.accountId, apiKey: key.body.apiKey };
}

export function chat(base: string, apiKey: string, body: unknown, options: { model?: string; headers?: Record<string, string>; raw?: string } = {}) {
  return json(`${base}/api/open/v1/models/${options.model ?? 'sim-chat'}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(options.headers ?? {}) },
    body: options.raw ?? JSON.stringify(body),
  });
}

/** leased, openLeases: what gateway instances' funds leases lock (docs/money.md). */
export async function balance(base: string, apiKey: string): Promise<{ balance: number; held: number; available: number; leased?: number; openLeases?: number }> {
  const response = await json(`${base}/api/distribution/api-credit/balance`, { headers: { authorization: `Bearer ${apiKey}` } });
  if (response.status !== 200) throw new Error(`balance: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export const hello = { messages: [{ role: 'user', content: 'hello' }] };

export const picture = { prompt: 'a red square', response_format: 'b64_json' };

export function image(base: string, apiKey: string, body: unknown, options: { model?: string; key?: string | null; headers?: Record<string, string>; raw?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(options.headers ?? {}) };
  if (options.key !== null) headers['idempotency-key'] = options.key ?? crypto.randomUUID();
  return json(`${base}/api/open/v1/models/${options.model ?? 'sim-image'}/images/generations`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
}

export function imageTask(base: string, apiKey: string, taskId: string, model = 'sim-image') {
  return json(`${base}/api/open/v1/models/${model}/images/tasks/${taskId}`, { headers: { authorization: `Bearer ${apiKey}` } });
}

export async function apiKeyFor(base: string, accountId: string): Promise<string> {
  const key = await admin(base, `/admin/v1/accounts/${accountId}/api-keys`, {});
  if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
  return key.body.apiKey;
}
