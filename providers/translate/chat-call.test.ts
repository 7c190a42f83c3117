import type { ChatCall, ChatMessage } from '../port';
import { chatCallToMessagesCall } from './chat-call';
import { InexactTranslationError } from './errors';

const signal = new AbortController().signal;
const user = (content: unknown): ChatMessage => ({ role: 'user', content });
const assistant = (content: unknown): ChatMessage => ({ role: 'assistant', content });

function call(messages: ChatMessage[], passthrough: Record<string, unknown> = {}): ChatCall {
  return { upstreamModel: 'claude-up', messages, maxTokens: 64, passthrough, signal };
}

function translated(messages: ChatMessage[], passthrough: Record<string, unknown> = {}): Record<string, unknown> {
  return chatCallToMessagesCall(call(messages, passthrough)).body;
}

/** The refusal's param, or undefined when the call translates. */
function refusedAt(messages: ChatMessage[], passthrough: Record<string, unknown> = {}): string | undefined {
  try {
    chatCallToMessagesCall(call(messages, passthrough));
    return undefined;
  } catch (error) {
    if (!(error instanceof InexactTranslationError)) throw error;
    return error.param;
  }
}

describe('chatCallToMessagesCall', () => {
  it('when the call is plain, then model, max tokens, directives and signal carry over and messages keep their content', () => {
    const directives = { outputTokens: 3 };
    const result = chatCallToMessagesCall({ ...call([user('hi'), assistant('hello'), user('bye')]), directives });
    expect(result).toEqual({
      upstreamModel: 'claude-up',
      maxTokens: 64,
      directives,
      signal,
      body: { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'bye' }] },
    });
  });

  it('when there are no directives, then the call has none', () => {
    expect('directives' in chatCallToMessagesCall(call([user('hi')]))).toBe(false);
  });

  it('when one leading system message has string content, then it is the system string', () => {
    expect(translated([{ role: 'system', content: 'be brief' }, user('hi')])).toEqual({ system: 'be brief', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('when a developer message leads with text parts, then it is the system prompt', () => {
    expect(translated([{ role: 'developer', content: [{ type: 'text', text: 'be brief' }] }, user('hi')]).system).toBe('be brief');
  });

  it('when several leading system texts are given, then each is one system text block, in order, empty ones left out', () => {
    const messages = [{ role: 'system', content: 'one' }, { role: 'developer', content: [{ type: 'text', text: 'two' }, { type: 'text', text: 'three' }] }, { role: 'system', content: '' }, user('hi')];
    expect(translated(messages).system).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
      { type: 'text', text: 'three' },
    ]);
  });

  it('when content is text parts, then they become text blocks', () => {
    const parts = [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }];
    expect(translated([user(parts)]).messages).toEqual([{ role: 'user', content: parts }]);
  });

  it('when params are exact, then temperature, top_p, stop and user are translated and stream settings and n=1 dropped', () => {
    const passthrough = { temperature: 0.7, top_p: 0.9, stop: ['END', 'STOP'], user: 'u-1', stream: true, stream_options: { include_usage: true }, n: 1, max_tokens: 9 };
    expect(translated([user('hi')], passthrough)).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      top_p: 0.9,
      stop_sequences: ['END', 'STOP'],
      metadata: { user_id: 'u-1' },
    });
  });

  it('when stop is one string, then it is one stop sequence', () => {
    expect(translated([user('hi')], { stop: 'END' }).stop_sequences).toEqual(['END']);
  });

  it.each([0, 1])('when temperature is %s, the edge of Anthropic\'s range, then it is kept', (temperature) => {
    expect(translated([user('hi')], { temperature }).temperature).toBe(temperature);
  });

  it('when a param or a message field is null, then it counts as not set', () => {
    const passthrough = { temperature: null, logprobs: null, tools: null, user: null };
    expect(translated([{ role: 'user', content: 'hi', name: null }], passthrough)).toEqual({ messages: [{ role: 'user', content: 'hi' }] });
  });

  it('when a param is set to the value OpenAI takes without it, then it asks for nothing and is dropped', () => {
    const defaults = { frequency_penalty: 0, presence_penalty: 0, logprobs: false, store: false, modalities: ['text'], response_format: { type: 'text' } };
    expect(translated([user('hi')], defaults)).toEqual({ messages: [{ role: 'user', content: 'hi' }] });
    expect(refusedAt([user('hi')], { response_format: { type: 'text', json_schema: { name: 'x' } } })).toBe('response_format');
    expect(refusedAt([user('hi')], { modalities: ['text', 'audio'] })).toBe('modalities');
  });

  it.each([
    ['temperature', { temperature: 1.5 }],
    ['temperature', { temperature: -0.1 }],
    ['temperature', { temperature: '0.5' }],
    ['top_p', { top_p: 2 }],
    ['stop', { stop: [1, 2] }],
    ['user', { user: 42 }],
    ['n', { n: 2 }],
    ['frequency_penalty', { frequency_penalty: 0.5 }],
    ['presence_penalty', { presence_penalty: 0.5 }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['logit_bias', { logit_bias: { 50256: -100 } }],
    ['seed', { seed: 7 }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['tools', { tools: [{ type: 'function', function: { name: 'f' } }] }],
    ['tool_choice', { tool_choice: 'auto' }],
    ['parallel_tool_calls', { parallel_tool_calls: false }],
    ['service_tier', { service_tier: 'flex' }],
    ['store', { store: true }],
    ['modalities', { modalities: ['audio'] }],
    ['reasoning_effort', { reasoning_effort: 'low' }],
    ['metadata', { metadata: { a: 'b' } }],
    ['brand_new_field', { brand_new_field: 1 }],
  ])('when the request sets %s without an exact equivalent, then it is refused naming it', (param, passthrough) => {
    expect(refusedAt([user('hi')], passthrough)).toBe(param);
  });

  it.each([
    ['messages[1].role', [user('hi'), { role: 'system', content: 'late' }]],
    ['messages[1].role', [user('hi'), { role: 'tool', content: 'r', tool_call_id: 'c' }, user('and')]],
    ['messages[0].role', [{ role: 'function', content: 'r', name: 'f' }, user('x')]],
    ['messages[0].role', [assistant('first')]],
    ['messages[1].role', [user('a'), user('b')]],
    ['messages[1].role', [user('a'), assistant('prefill')]],
    ['messages[2].role', [user('a'), assistant('b'), assistant('c'), user('d')]],
    ['messages', [{ role: 'system', content: 'only' }]],
    ['messages', []],
    ['messages[0].name', [{ role: 'user', content: 'hi', name: 'ann' }]],
    ['messages[1].tool_calls', [user('a'), { role: 'assistant', content: null, tool_calls: [{ id: 'c' }] }, user('b')]],
    ['messages[1].content', [user('a'), assistant(null), user('b')]],
    ['messages[0].content', [user('')]],
    ['messages[0].content[1]', [user([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }])]],
    ['messages[0].content[0]', [user([{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }])]],
    ['messages[0].content[0]', [user([{ type: 'file', file: { file_id: 'f' } }])]],
    ['messages[0].content[0]', [user([{ type: 'text', text: '' }])]],
    ['messages[0].content[0]', [user(['bare string'])]],
    ['messages[0].content[0].cache_control', [user([{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }])]],
    ['messages[0].content[0]', [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'u' } }] }, user('x')]],
    ['messages[0].name', [{ role: 'system', content: 'x', name: 'rules' }, user('x')]],
    ['messages[0].content', [user({ text: 'not a list' })]],
  ])('when the conversation cannot be said exactly on Anthropic, then it is refused at %s', (param, messages) => {
    expect(refusedAt(messages as ChatMessage[])).toBe(param);
  });

  it('when refused, then the message says why in a clause', () => {
    expect(() => chatCallToMessagesCall(call([user('hi')], { temperature: 1.5 }))).toThrow("temperature 1.5 is outside Anthropic's range of 0 to 1");
  });
});
