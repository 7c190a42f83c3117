// The embeddings use case in process, without HTTP: the gateway's real composition on the embedded
// host (LMDB in a temporary folder, the simulated provider), the use case called directly. What
// the contract suite cannot time: the provider deadline, the client leaving and the graceful
// shutdown's abort, each while the provider hangs, each ending with the hold released.

import { parseSimDirectives } from '../../../providers/simulated/chat';
import { inProcessGateway, type InProcessGateway } from '../../../test/support/in-process';
import type { ChatInput } from '../chat/prepare';
import { Drain } from '../drain';
import { prepareEmbeddings, runEmbeddings, type EmbeddingsDeps } from './use-case';

const PROVIDER_TIMEOUT_MS = 300;

let gateway: InProcessGateway;
let deps: EmbeddingsDeps;
const drain = new Drain();

beforeAll(async () => {
  gateway = await inProcessGateway('embeddings-use-case', { GATEWAY_PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS) }, drain);
  // The composition gives the drain to images only; the process hands it to the HTTP routes (main.ts).
  deps = { ...gateway.composition.deps, drain };
});

afterAll(async () => {
  await gateway?.composition.close();
});

const funded = (amount: number) => gateway.funded(amount);
const balance = (accountId: string) => gateway.balance(accountId);
const input = (accountId: string, body: unknown, extra: Partial<ChatInput> = {}) => gateway.input(accountId, 'sim-embed', body, extra);
const run = (call: ChatInput) => runEmbeddings(deps, prepareEmbeddings(deps, call), call);
const hanging = { directives: parseSimDirectives('hang') };

describe('the embeddings use case, in process', () => {
  it('when the call completes, then it answers the vectors with x-payg-charged = prompt tokens × TEXT_INPUT, and the balance moved by that', async () => {
    const accountId = await funded(1_000_000);
    const answer = await run(input(accountId, { model: 'sim-embed', input: ['abcdefgh', 'ij'] }));
    expect(answer.kind).toBe('json');
    if (answer.kind !== 'json') return;
    expect(answer.body).toMatchObject({ object: 'list', model: 'sim-embed', usage: { prompt_tokens: 3, total_tokens: 3 } });
    expect(answer.headers['x-payg-charged']).toBe(String(3 * 20));
    expect(await balance(accountId)).toMatchObject({ balance: 1_000_000 - 60, held: 0 });
  });

  it('when the provider does not answer by the deadline, then 504 provider_timeout and the hold is released', async () => {
    const accountId = await funded(1_000_000);
    const started = Date.now();
    await expect(run(input(accountId, { model: 'sim-embed', input: 'x' }, hanging))).rejects.toMatchObject({ code: 'provider_timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(PROVIDER_TIMEOUT_MS - 20);
    expect(await balance(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
  });

  it('when the client leaves while the provider works, then the call stops and nothing is charged', async () => {
    const accountId = await funded(1_000_000);
    const client = new AbortController();
    const answer = run(input(accountId, { model: 'sim-embed', input: 'x' }, { ...hanging, signal: client.signal }));
    setTimeout(() => client.abort(new Error('client disconnected')), 50);
    // No one is left to hear it: the provider's aborted call is the error the route would log.
    await expect(answer).rejects.toMatchObject({ code: 'provider_error' });
    expect(await balance(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
  });

  it('when the graceful shutdown aborts the calls in flight, then the call ends gateway_shutting_down, tracked until then, and nothing is charged', async () => {
    const accountId = await funded(1_000_000);
    const answer = run(input(accountId, { model: 'sim-embed', input: 'x' }, hanging));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(drain.size).toBe(1);
    drain.abortAll();
    await expect(answer).rejects.toMatchObject({ code: 'gateway_shutting_down' });
    expect(drain.size).toBe(0);
    expect(await balance(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
  });
});
