// A call under a rate limit that is admitted, then refused before anything is held (here: not
// enough funds, 402), on the gateway's real composition in process: chat on both wires,
// embeddings, an image request and a session run each answer the refusal with their wire's rate
// headers, and each gives its request and tokens back, so refusals use up none of the minute. And
// an image request whose task fails or is not resolved in time: counted, and told like a success.

import { randomUUID } from 'node:crypto';
import { parseSimDirectives } from '../../../providers/simulated/directives';
import { AccountClient } from '../../../actors/account/client';
import { GatewayError } from '../../../lib/errors';
import type { Limits } from '../../../lib/limits';
import { inProcessGateway, type InProcessGateway } from '../../../test/support/in-process';
import type { ChatDeps, ChatInput } from '../chat/prepare';
import { runChat } from '../chat/use-case';
import { anthropicWire, openAiWire } from '../chat/wires';
import { runEmbeddings, prepareEmbeddings } from '../embeddings/use-case';
import { SessionService } from '../sessions/use-case';
import { SessionWakeups } from '../sessions/wakeups';

let gateway: InProcessGateway;
let deps: ChatDeps;
const gatewayDeps = () => gateway.composition.deps;

beforeAll(async () => {
  // A short provider timeout: an image whose artifact comes later is answered unresolved (503) soon.
  gateway = await inProcessGateway('rate-refusals', { GATEWAY_PROVIDER_TIMEOUT_MS: '1000' });
  deps = gateway.composition.deps;
});
afterAll(async () => {
  await gateway?.composition.close();
});

const limits: Limits = { requests_per_minute: 2, tokens_per_minute: 100_000 };
const hello = { messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 };

/** Rate windows are whole minutes of the clock: a case that counts starts well inside one. */
async function awayFromMinuteEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/** An account with 10 nano-USD (too little for any call) under the account limits above; its input as a route would build it. */
async function poorLimitedAccount(): Promise<{ accountId: string; input: (modelId: string, body: unknown) => ChatInput }> {
  await awayFromMinuteEdge();
  const accountId = await gateway.funded(10);
  await new AccountClient(gateway.composition.embedded!.host).of(accountId).setLimits({ limits });
  return {
    accountId,
    input: (modelId, body) => {
      const base = gateway.input(accountId, modelId, body);
      return { ...base, caller: { ...base.caller, limits: { account: limits } } };
    },
  };
}

async function refusal(call: Promise<unknown>): Promise<GatewayError> {
  const error = await call.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** What the minute has counted for the account, once the give-backs (sent without waiting) have landed. */
async function counted(accountId: string): Promise<{ requests: number; tokens: number }> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return (await new AccountClient(gateway.composition.embedded!.host).of(accountId).rates({ apiKeyId: null })).account;
}

describe('a call refused after its rate admission', () => {
  it('when chats on both wires and embeddings are refused for their funds, then each 402 carries its wire\'s rate headers and the window keeps nothing of them', async () => {
    const { accountId, input } = await poorLimitedAccount();
    for (let i = 0; i < 2; i++) {
      const openai = await refusal(runChat(deps, openAiWire, input('sim-chat', hello)));
      expect(openai).toMatchObject({ code: 'insufficient_funds', status: 402 });
      expect(openai.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-remaining-tokens': '100000' });
      const anthropic = await refusal(runChat(deps, anthropicWire, input('sim-chat', hello)));
      expect(anthropic).toMatchObject({ code: 'insufficient_funds' });
      expect(anthropic.headers).toMatchObject({ 'anthropic-ratelimit-requests-limit': '2', 'anthropic-ratelimit-requests-remaining': '2', 'anthropic-ratelimit-tokens-remaining': '100000' });
      const embedded = input('sim-embed', { model: 'sim-embed', input: 'abc' });
      const embeddings = await refusal(runEmbeddings(gatewayDeps(), prepareEmbeddings(gatewayDeps(), embedded), embedded));
      expect(embeddings).toMatchObject({ code: 'insufficient_funds' });
      expect(embeddings.headers).toMatchObject({ 'x-ratelimit-remaining-requests': '2' });
    }
    // Six refusals under a limit of two requests: none of them used one.
    expect(await counted(accountId)).toEqual({ requests: 0, tokens: 0 });
  });

  it('when an image request is refused for its funds, then the 402 carries the rate headers and its request goes back', async () => {
    const { accountId, input } = await poorLimitedAccount();
    for (let i = 0; i < 3; i++) {
      const { caller, requestId } = input('sim-image', {});
      const body = { prompt: 'a red square', response_format: 'b64_json' };
      const refused = await refusal(gatewayDeps().images.generate({
        modelId: 'sim-image', body, bodyBytes: Buffer.byteLength(JSON.stringify(body)), caller: { accountId, apiKeyId: caller.apiKeyId! }, limited: caller, requestId, idempotencyKey: randomUUID(),
      }));
      expect(refused).toMatchObject({ code: 'insufficient_funds' });
      expect(refused.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '2' });
    }
    expect(await counted(accountId)).toEqual({ requests: 0, tokens: 0 });
  });

  it('when a session run is refused for its funds, then the 402 carries the rate headers and its request and tokens go back', async () => {
    const { accountId, input } = await poorLimitedAccount();
    const { sessions: sessionDeps } = gatewayDeps();
    const sessions = new SessionService({ ...sessionDeps, chat: deps, leaseMs: sessionDeps.runLeaseMs, wakeups: new SessionWakeups() });
    const owner = { accountId, apiKeyId: 'key_component' };
    const { session_id: sessionId } = await sessions.create(owner, undefined);
    for (let i = 0; i < 3; i++) {
      const refused = await refusal(sessions.startRun(sessionId, owner, input('sim-chat', { model: 'sim-chat', ...hello })));
      expect(refused).toMatchObject({ code: 'insufficient_funds' });
      expect(refused.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-remaining-tokens': '100000' });
    }
    expect(await counted(accountId)).toEqual({ requests: 0, tokens: 0 });
  });
});

describe('an image request that fails after its rate admission', () => {
  it('when the provider rejects the image or has not made it within the timeout, then the 400 or 503 carries the rate headers of the request it counted', async () => {
    const { accountId } = await poorLimitedAccount();
    await gateway.composition.deps.funds.of(accountId).credit({ amount: 1_000_000_000, reference: 'images' });
    const caller = gateway.input(accountId, 'sim-image', {}).caller;
    const limited = { ...caller, limits: { account: limits } };
    const body = { prompt: 'a red square', response_format: 'b64_json' };
    const generate = (directive: string) => gatewayDeps().images.generate({
      modelId: 'sim-image', body, bodyBytes: Buffer.byteLength(JSON.stringify(body)), caller: { accountId, apiKeyId: caller.apiKeyId! }, limited,
      requestId: randomUUID(), idempotencyKey: randomUUID(), directives: parseSimDirectives(directive),
    });
    const rejected = await refusal(generate('reject'));
    expect(rejected).toMatchObject({ code: 'provider_rejected', status: 400 });
    expect(rejected.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-payg-charged': '0' });
    const unresolved = await refusal(generate('late-artifact=2000'));
    expect(unresolved).toMatchObject({ code: 'image_unresolved', status: 503 });
    expect(unresolved.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'retry-after': '5' });
    // Both were counted: the minute has no request left for a third.
    expect(await refusal(generate(''))).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    expect(await counted(accountId)).toMatchObject({ requests: 2 });
  });
});
