// The chat use case in process, without HTTP: the gateway's real composition on the embedded
// host (LMDB in a temporary folder, the simulated provider), the use case called directly and its
// answer read as data: a JSON answer with its charge header, a stream's frames and the charge
// after them, a client that leaves, refusals that move no money.

import { GatewayError } from '../../../lib/errors';
import { AccountShare } from '../limits/account-share';
import { parseSimDirectives } from '../../../providers/simulated/chat';
import { inProcessGateway, type InProcessGateway } from '../../../test/support/in-process';
import type { StreamAnswer, StreamFrame, UseCaseAnswer } from '../http/answer';
import type { ChatDeps, ChatInput } from './prepare';
import { runChat } from './use-case';
import { anthropicWire, openAiWire } from './wires';

let gateway: InProcessGateway;
let deps: ChatDeps;

beforeAll(async () => {
  gateway = await inProcessGateway('chat-use-case');
  deps = gateway.composition.deps;
});

afterAll(async () => {
  await gateway?.composition.close();
});

const funded = (amount: number) => gateway.funded(amount);
const balance = (accountId: string) => gateway.balance(accountId);
const input = (accountId: string, body: unknown, extra: Partial<ChatInput> = {}) => gateway.input(accountId, 'sim-chat', body, extra);

/** Reads a stream answer as an HTTP writer would, telling each output frame it was sent. */
async function read(answer: UseCaseAnswer, stopAfter?: { frames: number; leave: () => void }): Promise<string[]> {
  expect(answer.kind).toBe('stream');
  const frames: string[] = [];
  for await (const frame of (answer as StreamAnswer).frames as AsyncIterable<StreamFrame>) {
    frames.push(frame.text);
    frame.sent?.();
    if (stopAfter && frames.length === stopAfter.frames) stopAfter.leave();
  }
  return frames;
}

const hello = { messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 };

describe('the chat use case, in process', () => {
  it('when a JSON chat completes, then the answer is the completion with x-payg-charged, and the balance moved by exactly that', async () => {
    const accountId = await funded(1_000_000_000);
    const answer = await runChat(deps, openAiWire, input(accountId, hello, { directives: parseSimDirectives('tokens=5') }));
    expect(answer.kind).toBe('json');
    if (answer.kind !== 'json') return;
    const body = answer.body as { object: string; usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.object).toBe('chat.completion');
    expect(body.usage.completion_tokens).toBe(5);
    const charged = Number(answer.headers['x-payg-charged']);
    expect(charged).toBe(body.usage.prompt_tokens * 100 + 5 * 400);
    expect(await balance(accountId)).toMatchObject({ balance: 1_000_000_000 - charged, held: 0 });
  });

  it('when a stream completes, then its frames end with [DONE], and it is charged once its end has been read', async () => {
    const accountId = await funded(1_000_000_000);
    const answer = await runChat(deps, openAiWire, input(accountId, { ...hello, stream: true }, { directives: parseSimDirectives('tokens=4') }));
    const frames = await read(answer);
    expect(frames.at(-1)).toBe('data: [DONE]\n\n');
    expect(frames.filter((f) => f.includes('"content"')).length).toBe(4);
    const after = await balance(accountId);
    expect(after.held).toBe(0);
    expect(after.balance).toBeLessThan(1_000_000_000);
  });

  it('when the Anthropic wire streams, then the frames are its events, message_stop last, then the charge as a comment', async () => {
    const accountId = await funded(1_000_000_000);
    const answer = await runChat(deps, anthropicWire, input(accountId, { ...hello, stream: true }, { directives: parseSimDirectives('tokens=3') }));
    // The wire's own end is empty: message_stop is the provider's last event, relayed.
    const frames = (await read(answer)).filter((frame) => frame !== '');
    expect(frames[0]).toMatch(/^event: message_start\n/);
    expect(frames.at(-2)).toMatch(/^event: message_stop\n/);
    const { balance: left, held } = await balance(accountId);
    expect(held).toBe(0);
    expect(frames.at(-1)).toBe(`: x-payg-charged ${1_000_000_000 - left}\n\n`);
  });

  it('when the client leaves mid-stream, then the stream stops, no end is sent, and only what was produced is charged', async () => {
    const accountId = await funded(1_000_000_000);
    const gone = new AbortController();
    const answer = await runChat(deps, openAiWire, input(accountId, { ...hello, stream: true }, { signal: gone.signal, directives: parseSimDirectives('tokens=20;stream-delay=20') }));
    const frames = await read(answer, { frames: 3, leave: () => gone.abort(new Error('client disconnected')) });
    expect(frames).not.toContain('data: [DONE]\n\n');
    expect(frames.length).toBeLessThan(20);
    const after = await balance(accountId);
    expect(after.held).toBe(0);
    const full = 1_000_000_000 - after.balance;
    expect(full).toBeGreaterThan(0);
    expect(full).toBeLessThan(20 * 400 + 100 * 100);
  });

  it('when the provider fails before any output, then the use case throws provider_error and the hold is released', async () => {
    const accountId = await funded(1_000_000_000);
    await expect(runChat(deps, openAiWire, input(accountId, hello, { directives: parseSimDirectives('fail-before-output') })))
      .rejects.toMatchObject({ code: 'provider_error' });
    expect(await balance(accountId)).toMatchObject({ balance: 1_000_000_000, held: 0 });
  });

  it('when the estimate exceeds the balance, then the use case throws insufficient_funds and nothing is held', async () => {
    const accountId = await funded(10);
    const refusal = await runChat(deps, openAiWire, input(accountId, hello)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ code: 'insufficient_funds', status: 402 });
    expect(await balance(accountId)).toMatchObject({ balance: 10, held: 0, openHolds: 0 });
  });

  it('when an account has its share of model calls running, then the next is refused 429 before anything is held, and each call ended (streamed, answered, refused, failed) gives its place back', async () => {
    const accountId = await funded(1_000_000_000);
    const limited = { ...deps, callsRunning: new AccountShare(2, 'calls_in_flight') };
    const call = (body: unknown, directives = 'tokens=3') => runChat(limited, openAiWire, input(accountId, body, { directives: parseSimDirectives(directives) }));
    const refusedNext = async () => {
      const refusal = await call(hello).catch((error: unknown) => error);
      expect(refusal).toMatchObject({ code: 'rate_limit_exceeded', status: 429, param: 'calls_in_flight' });
    };
    const first = await call({ ...hello, stream: true });
    const second = await call({ ...hello, stream: true });
    const before = await balance(accountId);
    await refusedNext();
    expect(await balance(accountId)).toEqual(before);
    await read(first);
    await expect(call(hello)).resolves.toMatchObject({ kind: 'json' });
    await expect(call(hello, 'fail-before-output')).rejects.toMatchObject({ code: 'provider_error' });
    await expect(call({ ...hello, max_tokens: 10 ** 9 })).rejects.toMatchObject({ status: 400 });
    const third = await call({ ...hello, stream: true });
    await refusedNext();
    await read(second);
    await read(third);
    await expect(call(hello)).resolves.toMatchObject({ kind: 'json' });
  });

  it('when the body asks for max_completion_tokens, then it is refused before anything is held', async () => {
    const accountId = await funded(1_000_000_000);
    await expect(runChat(deps, openAiWire, input(accountId, { ...hello, max_completion_tokens: 5 }))).rejects.toMatchObject({ code: 'max_completion_tokens_unsupported' });
    expect(await balance(accountId)).toMatchObject({ held: 0, openHolds: 0 });
  });
});
