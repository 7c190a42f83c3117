// A chat stream's money when its upstream misbehaves or its client leaves at an awkward moment:
// the use case in process (the embedded host's real composition) against an upstream whose every
// byte the test writes (test/support/scripted-upstream.ts). What the client reads, what the
// balance and the ledger say, and that the hold always ends.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { countChatPrompt, countText } from '../../../providers/tokenizer';
import { inProcessGateway, type InProcessGateway } from '../../../test/support/in-process';
import { chunk, scriptedUpstream, sse, sseThenCut, textChunk, type ScriptedUpstream } from '../../../test/support/scripted-upstream';
import type { StreamAnswer, StreamFrame } from '../http/answer';
import type { AnyWire } from './prepare';
import { runChat } from './use-case';
import { anthropicWire, openAiWire } from './wires';

let upstream: ScriptedUpstream;
let gateway: InProcessGateway;

/** The default catalog plus models served by the scripted upstream (prices: input 100, output 400). */
function catalogFile(url: string): string {
  const catalog = JSON.parse(readFileSync(join(__dirname, '../../../catalog/default-catalog.json'), 'utf8'));
  const chat = catalog.models[0];
  const served = (id: string, n: number, profile: Record<string, unknown>) => ({ ...chat, id, profiles: [{ ...chat.profiles[0], profile_id: `5c2e9b63-4d2f-4f9d-8b66-2e3b8c1d0f${String(n).padStart(2, '0')}`, upstream_model: 'up', ...profile }] });
  catalog.models.push(
    served('scripted-chat', 1, { provider: 'scripted-openai' }),
    served('scripted-tokenized-chat', 2, { provider: 'scripted-openai', tokenizer: 'o200k_base' }),
    served('scripted-claude', 3, { ...chat.profiles[1], profile_id: '5c2e9b63-4d2f-4f9d-8b66-2e3b8c1d0f03', provider: 'scripted-anthropic', upstream_model: 'up' }),
    // Two upstreams, nearly every first attempt on the one answering by the script named "first".
    served('scripted-routed-chat', 4, { providers: [{ provider: 'scripted-openai-first', weight: 1000 }, { provider: 'scripted-openai', weight: 1 }] }),
  );
  delete catalog.models.at(-1).profiles[0].provider;
  catalog.providers['scripted-openai-first'] = { kind: 'openai', baseUrl: url, headers: { 'x-script': 'first' } };
  catalog.providers['scripted-openai'] = { kind: 'openai', baseUrl: url };
  catalog.providers['scripted-anthropic'] = { kind: 'anthropic', baseUrl: url };
  const file = join(mkdtempSync(join(tmpdir(), 'stream-money-')), 'catalog.json');
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

beforeAll(async () => {
  upstream = await scriptedUpstream();
  // Holds per request, so that one left open shows in the balance's `held`.
  gateway = await inProcessGateway('stream-money', { GATEWAY_CATALOG_FILE: catalogFile(upstream.url), GATEWAY_FUNDS_LEASE: 'off', GATEWAY_HOLD_PROGRESS_TOKENS: '1' });
});

afterAll(async () => {
  await gateway?.composition.close();
  await upstream?.close();
});

const FUNDS = 1_000_000_000;

/** A funded account's one call: the frames the client read (each told sent), then its balance and ledger once the call is over. */
async function call(model: string, wire: 'openai' | 'anthropic', body: Record<string, unknown>) {
  const accountId = await gateway.funded(FUNDS);
  const frames: string[] = [];
  try {
    const answer = await runChat(gateway.composition.deps, (wire === 'openai' ? openAiWire : anthropicWire) as unknown as AnyWire, gateway.input(accountId, model, body));
    for await (const frame of (answer as StreamAnswer).frames as AsyncIterable<StreamFrame>) {
      frames.push(frame.text);
      frame.sent?.();
    }
  } catch (error) {
    // Failed before any output: answered as an error, no frame.
    expect(error).toMatchObject({ code: 'provider_error' });
  }
  const balance = await gateway.balance(accountId);
  const ledger = gateway.composition.embedded!.ledger;
  const usage = await ledger.rows('usage', accountId, DEFAULT_POOL, 1, 20);
  const quantities = Object.fromEntries(usage.map((row) => [(row as { unit: string }).unit, [(row as { quantity: number }).quantity, (row as { unitPrice: number }).unitPrice]]));
  return { frames, balance, charged: FUNDS - balance.balance, ledgerBalance: (await ledger.account(accountId, DEFAULT_POOL)).balance, quantities };
}

/** The charge the stream told its client, `: x-payg-charged <n>`. */
const told = (frames: string[]) => Number(frames.find((f) => f.startsWith(': x-payg-charged '))?.slice(17));

describe('a chat stream\'s money', () => {
  it('when a stream whose prompt is more text than is tokenized (140,000 spaces) is cut before its usage, then its prompt is charged no more than the provider counts it', async () => {
    upstream.answer((res) => sseThenCut(res, [textChunk('a'), textChunk(' b')]));
    const spaces = ' '.repeat(140_000);
    const messages = [{ role: 'user', content: spaces }];
    const cut = await call('scripted-tokenized-chat', 'openai', { messages, max_tokens: 20, stream: true });
    // The provider counts 1,095 tokens of text (runs of 128 spaces) and OpenAI's framing; a quarter of the bytes is 35,008.
    const provider = countText('o200k_base', spaces) + countChatPrompt('o200k_base', [{ role: 'user', content: '' }]);
    expect(cut.quantities.TEXT_INPUT[0]).toBeLessThanOrEqual(provider);
    expect(cut.quantities.TEXT_INPUT[0]).toBeGreaterThan(1_000);
    expect(cut.balance).toMatchObject({ held: 0, openHolds: 0 });
  });

  it('when a stream whose prompt spells a special token is cut before its usage, then its prompt is counted as text, it is charged what it relayed, and its hold ends', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      upstream.answer((res) => sseThenCut(res, [textChunk('a'), textChunk(' b'), textChunk(' c')]));
      const messages = [{ role: 'user', content: 'what is <|endoftext|>?' }];
      const cut = await call('scripted-tokenized-chat', 'openai', { messages, max_tokens: 20, stream: true });
      expect(JSON.parse(cut.frames.at(-1)!.slice(6))).toMatchObject({ error: { code: 'provider_error' } });
      // The special token's characters counted as the text they are (16 tokens, where "hello" is 8).
      const prompt = countChatPrompt('o200k_base', messages);
      expect(prompt).toBe(16);
      expect(cut.quantities).toEqual({ TEXT_INPUT: [prompt, 100], TEXT_OUTPUT: [3, 400] });
      expect(cut.balance).toMatchObject({ held: 0, openHolds: 0 });
      expect([told(cut.frames), cut.ledgerBalance]).toEqual([cut.charged, FUNDS - cut.charged]);
      expect(cut.charged).toBe(prompt * 100 + 3 * 400);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('when the upstream puts its usage on the last text chunk, then a client that did not ask for usage still reads that text and the finish, without the usage, and is charged the stated count', async () => {
    const last = chunk({ choices: [{ index: 0, delta: { content: ' c' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } });
    upstream.answer((res) => sse(res, [textChunk('a'), textChunk(' b'), last, 'data: [DONE]\n\n']));
    const messages = [{ role: 'user', content: 'hello' }];
    const plain = await call('scripted-chat', 'openai', { messages, max_tokens: 20, stream: true });
    const chunks = plain.frames.filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)));
    expect(chunks.map((c) => c.choices[0].delta.content).join('')).toBe('a b c');
    expect(chunks.at(-1)).toMatchObject({ model: 'scripted-chat', choices: [{ finish_reason: 'stop' }] });
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    expect(plain.frames.at(-1)).toBe('data: [DONE]\n\n');
    expect(plain.quantities).toEqual({ TEXT_INPUT: [10, 100], TEXT_OUTPUT: [3, 400] });
    expect([told(plain.frames), plain.charged, FUNDS - plain.ledgerBalance]).toEqual([2200, 2200, 2200]);
    // Asked for: the same chunk, its usage with it.
    const asked = await call('scripted-chat', 'openai', { messages, max_tokens: 20, stream: true, stream_options: { include_usage: true } });
    const withUsage = asked.frames.filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)));
    expect(withUsage.at(-1)).toMatchObject({ choices: [{ delta: { content: ' c' }, finish_reason: 'stop' }], usage: { completion_tokens: 3 } });
    expect(asked.charged).toBe(2200);
  });

  /** An Anthropic event as the upstream writes it. */
  const event = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

  /** The stream ended as its wire ends a whole answer: no error frame, and [DONE] or message_stop last. */
  const endedWhole = (wire: 'openai' | 'anthropic', frames: string[]) => {
    expect(frames.filter((f) => f.includes('"error"'))).toEqual([]);
    const last = frames.filter((f) => !f.startsWith(':') && f !== '').at(-1);
    if (wire === 'openai') expect(last).toBe('data: [DONE]\n\n');
    else expect(last).toMatch(/^event: message_stop\n/);
  };

  it.each(['openai', 'anthropic'] as const)('when an Anthropic stream breaks after its message_delta stated the final count, then the %s wire charges that count, as the native wire does, and ends the answer whole', async (wire) => {
    upstream.answer((res) => sseThenCut(res, [
      event({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'up', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
      event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'several words in one delta' } }),
      event({ type: 'content_block_stop', index: 0 }),
      event({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
    ]));
    const cut = await call('scripted-claude', wire, { messages: [{ role: 'user', content: 'hello' }], max_tokens: 20, stream: true });
    expect(cut.quantities).toEqual({ TEXT_INPUT: [10, 100], TEXT_OUTPUT: [5, 400] });
    expect([told(cut.frames), cut.charged, FUNDS - cut.ledgerBalance]).toEqual([3000, 3000, 3000]);    endedWhole(wire, cut.frames);
  });

  it.each(['openai', 'anthropic'] as const)('when an OpenAI stream breaks after its usage chunk, before [DONE], then the %s wire charges the stated count and ends the answer whole', async (wire) => {
    upstream.answer((res) => sseThenCut(res, [textChunk('several words in one chunk'), textChunk('', 'stop'), chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })]));
    const cut = await call('scripted-chat', wire, { messages: [{ role: 'user', content: 'hello' }], max_tokens: 20, stream: true });
    expect(cut.quantities).toEqual({ TEXT_INPUT: [10, 100], TEXT_OUTPUT: [5, 400] });
    expect([told(cut.frames), cut.charged, FUNDS - cut.ledgerBalance]).toEqual([3000, 3000, 3000]);
    endedWhole(wire, cut.frames);
  });

  it.each(['openai', 'anthropic'] as const)('when an OpenAI stream breaks after its finish reason, before its usage chunk, then the %s wire ends the answer whole and charges it by the cut-stream count', async (wire) => {
    upstream.answer((res) => sseThenCut(res, [textChunk('a'), textChunk(' b', 'stop')]));
    const cut = await call('scripted-chat', wire, { messages: [{ role: 'user', content: 'hello' }], max_tokens: 20, stream: true });
    expect(cut.quantities.TEXT_OUTPUT).toEqual([2, 400]);
    expect(cut.balance.held).toBe(0);
    endedWhole(wire, cut.frames);
  });

  it.each(['openai', 'anthropic'] as const)('when an OpenAI stream breaks before its finish reason, then the %s wire still ends with its error frame', async (wire) => {
    upstream.answer((res) => sseThenCut(res, [textChunk('a'), textChunk(' b')]));
    const cut = await call('scripted-chat', wire, { messages: [{ role: 'user', content: 'hello' }], max_tokens: 20, stream: true });
    expect(cut.quantities.TEXT_OUTPUT).toEqual([2, 400]);
    expect(cut.frames.filter((f) => f.includes('"error"'))).toHaveLength(1);
    expect(cut.frames).not.toContain('data: [DONE]\n\n');
  });

  // OpenAI's own opening chunk: the role, an empty text and a null refusal; some compatible
  // servers add an empty tool call list to every delta.
  const opening = chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: null }] });

  it('when an upstream breaks right after its opening chunk, then nothing was produced: the next upstream serves the call and is charged once, and a lone upstream\'s hold is released', async () => {
    upstream.answer((res) => sseThenCut(res, [opening]), 'first');
    upstream.answer((res) => sse(res, [opening, textChunk('a'), textChunk(' b'), textChunk('', 'stop'), chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }), 'data: [DONE]\n\n']));
    const messages = [{ role: 'user', content: 'hello' }];
    const routed = await call('scripted-routed-chat', 'openai', { messages, max_tokens: 20, stream: true });
    expect(routed.frames.filter((f) => f.includes('"error"'))).toEqual([]);
    expect(routed.frames.at(-1)).toBe('data: [DONE]\n\n');
    expect(routed.quantities).toEqual({ TEXT_INPUT: [10, 100], TEXT_OUTPUT: [2, 400] });
    expect([told(routed.frames), routed.charged, FUNDS - routed.ledgerBalance]).toEqual([1800, 1800, 1800]);

    upstream.answer((res) => sseThenCut(res, [opening]));
    const alone = await call('scripted-chat', 'openai', { messages, max_tokens: 20, stream: true });
    expect(alone.frames).toEqual([]);
    expect(alone.charged).toBe(0);
    expect(alone.quantities).toEqual({});
    expect(alone.balance).toMatchObject({ held: 0, openHolds: 0 });
  });
});
