import type { MessagesCall } from '../port';
import { InexactTranslationError } from './errors';
import { messagesCallToChatCall } from './messages-call';

const signal = new AbortController().signal;
const hi = [{ role: 'user', content: 'hi' }];

function call(body: Record<string, unknown>): MessagesCall {
  return { upstreamModel: 'gpt-up', body, maxTokens: 64, signal };
}

/** The refusal's param, or undefined when the call translates. */
function refusedAt(body: Record<string, unknown>): string | undefined {
  try {
    messagesCallToChatCall(call(body));
    return undefined;
  } catch (error) {
    if (!(error instanceof InexactTranslationError)) throw error;
    return error.param;
  }
}

describe('messagesCallToChatCall', () => {
  it('when the call is plain, then model, max tokens, directives and signal carry over and messages keep their content', () => {
    const directives = { failAfterChunks: 2 };
    const messages = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'bye' }];
    expect(messagesCallToChatCall({ ...call({ messages }), directives })).toEqual({ upstreamModel: 'gpt-up', messages, maxTokens: 64, passthrough: {}, directives, signal });
  });

  it('when there are no directives, then the call has none', () => {
    expect('directives' in messagesCallToChatCall(call({ messages: hi }))).toBe(false);
  });

  it('when system is a string, then it is one leading system message', () => {
    expect(messagesCallToChatCall(call({ system: 'be brief', messages: hi })).messages).toEqual([{ role: 'system', content: 'be brief' }, ...hi]);
  });

  it('when system is text blocks, then they are the text parts of one leading system message', () => {
    const system = [{ type: 'text', text: 'one' }, { type: 'text', text: 'two', cache_control: null }];
    expect(messagesCallToChatCall(call({ system, messages: hi })).messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] });
  });

  it('when content is text blocks, then they become text parts', () => {
    const content = [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }];
    expect(messagesCallToChatCall(call({ messages: [{ role: 'user', content }] })).messages).toEqual([{ role: 'user', content }]);
  });

  it('when params are exact, then temperature, top_p and metadata.user_id are translated, an empty stop_sequences and stream dropped', () => {
    const body = { messages: hi, temperature: 1, top_p: 0.5, stop_sequences: [], metadata: { user_id: 'u-1' }, stream: true };
    expect(messagesCallToChatCall(call(body)).passthrough).toEqual({ temperature: 1, top_p: 0.5, user: 'u-1' });
  });

  it('when stop_sequences is empty or metadata has no user, then nothing is sent for them', () => {
    expect(messagesCallToChatCall(call({ messages: hi, stop_sequences: [], metadata: { user_id: null } })).passthrough).toEqual({});
  });

  it.each([
    ['top_k', { top_k: 5 }],
    ['thinking', { thinking: { type: 'enabled', budget_tokens: 1024 } }],
    ['tools', { tools: [{ name: 'f', input_schema: {} }] }],
    ['tool_choice', { tool_choice: { type: 'auto' } }],
    ['service_tier', { service_tier: 'auto' }],
    ['container', { container: 'c' }],
    ['mcp_servers', { mcp_servers: [] }],
    ['brand_new_field', { brand_new_field: 1 }],
    ['temperature', { temperature: 1.2 }],
    ['temperature', { temperature: 'hot' }],
    ['top_p', { top_p: -1 }],
    ['stop_sequences', { stop_sequences: ['END'] }],
    ['stop_sequences', { stop_sequences: ['1', '2', '3', '4', '5'] }],
    ['stop_sequences', { stop_sequences: 'END' }],
    ['metadata.tags', { metadata: { user_id: 'u', tags: ['x'] } }],
    ['metadata.user_id', { metadata: { user_id: 7 } }],
    ['metadata', { metadata: 'u-1' }],
  ])('when the request sets %s without an exact equivalent, then it is refused naming it', (param, extra) => {
    expect(refusedAt({ messages: hi, ...extra })).toBe(param);
  });

  it('when thinking is turned off, then it asks for nothing OpenAI does not do and is dropped; on in any way, it is refused', () => {
    expect(messagesCallToChatCall(call({ messages: hi, thinking: { type: 'disabled' } })).passthrough).toEqual({});
    expect(refusedAt({ messages: hi, thinking: { type: 'enabled', budget_tokens: 1024 } })).toBe('thinking');
    expect(refusedAt({ messages: hi, thinking: { type: 'disabled', budget_tokens: 1024 } })).toBe('thinking');
  });

  it.each([
    ['system[0].cache_control', { system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }], messages: hi }],
    ['system[0]', { system: [{ type: 'image', source: {} }], messages: hi }],
    ['system', { system: 42, messages: hi }],
    ['messages', { messages: 'hi' }],
    ['messages[0].role', { messages: [{ role: 'system', content: 'x' }] }],
    ['messages[1].role', { messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] }],
    ['messages[1].role', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'The answer is' }] }],
    ['messages[0].content[0]', { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }] }] }],
    ['messages[0].content[1]', { messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source: {} }] }] }],
    ['messages[0].content[0]', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] }] }],
    ['messages[1].content[0]', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }, { role: 'user', content: 'b' }] }],
    ['messages[0].content[0].cache_control', { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }] }],
    ['messages[0].content[0].citations', { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', citations: [{ type: 'char_location' }] }] }] }],
    ['messages[0].content', { messages: [{ role: 'user', content: null }] }],
    ['messages[0].name', { messages: [{ role: 'user', content: 'x', name: 'ann' }] }],
  ])('when the conversation cannot be said exactly on OpenAI, then it is refused at %s', (param, body) => {
    expect(refusedAt(body)).toBe(param);
  });

  it('when refused, then the message says why in a clause', () => {
    expect(() => messagesCallToChatCall(call({ messages: hi, stop_sequences: ['1', '2', '3', '4', '5'] }))).toThrow('stop_sequences cannot be reported back exactly');
  });
});
