import { isPreamble, pastPreamble } from './preamble';
import type { StreamPiece } from './wires';

const openAi = (delta: Record<string, unknown>, finish: string | null = null): StreamPiece & { chunk: unknown } => ({
  chunk: { choices: [{ index: 0, delta, finish_reason: finish }] },
  outputDelta: typeof delta.content === 'string' ? delta.content : '',
});
const anthropic = (event: string, data: Record<string, unknown> = {}, outputDelta = ''): StreamPiece & { event: string; data: Record<string, unknown> } => ({ event, data: { type: event, ...data }, outputDelta });

/** A stream of `pieces` that fails with `error` after them (if given), telling whether it was let go. */
function upstream(pieces: StreamPiece[], error?: Error) {
  const state = { returned: false, read: 0 };
  const iterable: AsyncIterable<StreamPiece> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        if (state.read < pieces.length) return { done: false, value: pieces[state.read++] };
        if (error) throw error;
        return { done: true, value: undefined };
      },
      return: async () => {
        state.returned = true;
        return { done: true, value: undefined };
      },
    }),
  };
  return { iterable, state };
}

async function all(pieces: AsyncIterable<StreamPiece>): Promise<StreamPiece[]> {
  const out: StreamPiece[] = [];
  for await (const piece of pieces) out.push(piece);
  return out;
}

describe('a stream opened past its preamble', () => {
  it('when pieces show the client nothing (a role chunk without text, message_start, ping, an empty text block), then they are the preamble; text, tool calls, thinking, an end or usage are not', () => {
    expect(isPreamble(openAi({ role: 'assistant', content: '' }))).toBe(true);
    expect(isPreamble(openAi({ role: 'assistant' }))).toBe(true);
    // OpenAI's own opening chunk (its refusal null), and the empty tool call list some compatible servers send on every delta.
    expect(isPreamble(openAi({ role: 'assistant', content: '', refusal: null }))).toBe(true);
    expect(isPreamble(openAi({ role: 'assistant', content: null, tool_calls: [], function_call: null }))).toBe(true);
    // Azure's first chunk: no choice yet, only its prompt filter results.
    expect(isPreamble({ chunk: { choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] }, outputDelta: '' } as StreamPiece)).toBe(true);
    expect(isPreamble(anthropic('message_start', { message: { usage: { input_tokens: 3 } } }))).toBe(true);
    expect(isPreamble(anthropic('ping'))).toBe(true);
    expect(isPreamble(anthropic('content_block_start', { content_block: { type: 'text', text: '' } }))).toBe(true);
    expect(isPreamble(openAi({ role: 'assistant', content: 'hi' }))).toBe(false);
    expect(isPreamble(openAi({ tool_calls: [{ index: 0, function: { name: 'f' } }] }))).toBe(false);
    expect(isPreamble(openAi({}, 'stop'))).toBe(false);
    expect(isPreamble({ ...openAi({}), chunk: { choices: [] }, usage: { inputTokens: 1, outputTokens: 1 } } as StreamPiece)).toBe(false);
    expect(isPreamble(anthropic('content_block_start', { content_block: { type: 'thinking', thinking: '' } }))).toBe(false);
    expect(isPreamble(anthropic('content_block_start', { content_block: { type: 'tool_use', name: 'f' } }))).toBe(false);
    expect(isPreamble(anthropic('content_block_delta', { delta: { type: 'text_delta', text: 'hi' } }, 'hi'))).toBe(false);
  });

  it('when the stream goes on after its preamble, then every piece is given in order, the ones read ahead first, and the first byte is told', async () => {
    const pieces = [openAi({ role: 'assistant', content: '' }), openAi({ content: 'a' }), openAi({ content: 'b' }), openAi({}, 'stop')];
    const { iterable } = upstream(pieces);
    let answered = 0;
    const opened = await pastPreamble(iterable, () => answered++);
    expect(answered).toBeGreaterThan(0);
    expect(await all(opened)).toEqual(pieces);
  });

  it('when the stream fails inside its preamble, then opening it fails (a failure before any output) and the stream is let go', async () => {
    const { iterable, state } = upstream([anthropic('message_start'), anthropic('ping')], new Error('cut'));
    await expect(pastPreamble(iterable, () => undefined)).rejects.toThrow('cut');
    expect(state.returned).toBe(true);
  });

  it('when the preamble goes on and on, then no more than a few pieces are read ahead, and the rest come as they are read', async () => {
    const pieces = Array.from({ length: 20 }, () => anthropic('ping'));
    const { iterable, state } = upstream(pieces);
    const opened = await pastPreamble(iterable, () => undefined);
    expect(state.read).toBeLessThanOrEqual(8);
    expect(await all(opened)).toHaveLength(20);
  });

  it('when the reader stops early (a client gone), then the stream is let go; an empty stream opens and gives nothing', async () => {
    const { iterable, state } = upstream([openAi({ role: 'assistant' }), openAi({ content: 'a' }), openAi({ content: 'b' })]);
    for await (const piece of await pastPreamble(iterable, () => undefined)) if (piece.outputDelta === 'a') break;
    expect(state.returned).toBe(true);
    expect(await all(await pastPreamble(upstream([]).iterable, () => undefined))).toEqual([]);
  });
});
