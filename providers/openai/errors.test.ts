// What of an upstream's failure reaches the customer (customerProviderMessage) and what only the
// operators' log does (the error's message): against real local upstreams answering as
// OpenAI does when the platform's key is wrong, refusing a parameter, or not listening at all.
import { answeringUpstream } from '../../test/support/answering-upstream';
import { freePort } from '../../test/support/processes';
import { AnthropicMessagesProvider } from '../anthropic/messages';
import { customerProviderMessage } from '../port';
import { customerDetail } from '../redact';
import { rejection } from '../../test/support/errors';
import { OpenAiChatProvider } from './chat';
import { OpenAiImageProvider } from './images';

const ENTRY = 'secret-entry-7';
const PLATFORM_KEY = 'sk-platform-key-1234567890abcdefwxyz';

const chatCall = () => ({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, passthrough: {}, signal: AbortSignal.timeout(5000) });
const imageCall = () => ({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url' as const, passthrough: {}, sentAt: Date.now(), signal: AbortSignal.timeout(5000) });

const WRONG_KEY = {
  error: {
    message: 'Incorrect API key provided: sk-plat****************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error', param: null, code: 'invalid_api_key',
  },
};

function expectNothingInternal(message: string, url: string): void {
  expect(message).not.toMatch(/sk-/);
  expect(message).not.toContain('****');
  expect(message).not.toContain(ENTRY);
  expect(message).not.toContain(new URL(url).host);
  expect(message).not.toContain('127.0.0.1');
}

describe('an upstream refusing the platform\'s credentials (401, 403, 407)', () => {
  it.each([401, 403, 407])('when the upstream answers %i echoing the key, then the failure is the upstream\'s (unavailable), the customer reads a generic sentence, the log has it all', async (status) => {
    const upstream = await answeringUpstream(status, WRONG_KEY);
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, apiKey: PLATFORM_KEY, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    await upstream.close();
    expect([error.kind, error.upstreamStatus, error.detail]).toEqual(['unavailable', status, undefined]);
    const customer = customerProviderMessage(error);
    expect(customer).toBe("the provider refused the platform's credentials");
    expectNothingInternal(customer, upstream.url);
    // The operators' account: the entry, the status and the upstream's words.
    expect(error.message).toContain(`${ENTRY} answered ${status}`);
    expect(error.message).toContain('Incorrect API key provided');
  });

  it('when an upstream echoes the configured key whole, then not even the log holds it', async () => {
    const upstream = await answeringUpstream(401, { error: { message: `Incorrect API key provided: ${PLATFORM_KEY}` } });
    const provider = new OpenAiImageProvider({ name: ENTRY, baseUrl: upstream.url, apiKey: PLATFORM_KEY, maxBodyBytes: 4096 });
    const error = await rejection(provider.generate(imageCall()));
    await provider.close();
    await upstream.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['unavailable', 401]);
    expect(error.message).not.toContain(PLATFORM_KEY);
    expect(error.message).toContain('[redacted]');
  });

  it('when an Anthropic upstream answers 401, then it is the same generic sentence, its x-api-key in no message', async () => {
    const upstream = await answeringUpstream(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${PLATFORM_KEY}` } });
    const provider = new AnthropicMessagesProvider({ name: ENTRY, baseUrl: upstream.url, apiKey: PLATFORM_KEY, maxBodyBytes: 4096 });
    const error = await rejection(provider.create({ upstreamModel: 'claude', body: { messages: [{ role: 'user', content: 'hi' }] }, maxTokens: 2, signal: AbortSignal.timeout(5000) }));
    await provider.close();
    await upstream.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['unavailable', 401]);
    expect(customerProviderMessage(error)).toBe("the provider refused the platform's credentials");
    expect(error.message).not.toContain(PLATFORM_KEY);
  });
});

describe('an upstream refusing the request (other 4xx)', () => {
  it('when the upstream answers 400 with a useful reason, then the customer reads it, without the entry name, addresses, URLs or key-like tokens', async () => {
    const upstream = await answeringUpstream(400, {
      error: { message: `Invalid value for 'temperature' on ${ENTRY}: must be at most 2 (upstream ${'http://10.0.0.7:8443/v1'}, 10.0.0.7:8443, key sk-abcd1234).`, type: 'invalid_request_error', param: 'temperature' },
    });
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, apiKey: PLATFORM_KEY, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    await upstream.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['rejected', 400]);
    const customer = customerProviderMessage(error);
    expect(customer).toMatch(/^the provider rejected the request \(400\): Invalid value for 'temperature' on the provider: must be at most 2/);
    expectNothingInternal(customer, upstream.url);
    expect(customer).not.toContain('10.0.0.7');
    expect(customer).not.toContain('http://');
  });

  it('when the upstream answers 429 with Retry-After, then it is rate_limited (not the request\'s fault): the wait is kept, none of its words reach the customer', async () => {
    const upstream = await answeringUpstream(429, { error: { message: `Rate limit reached for org-platform on ${ENTRY}`, type: 'requests' } }, { 'retry-after': '7' });
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, apiKey: PLATFORM_KEY, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    await upstream.close();
    expect([error.kind, error.upstreamStatus, error.retryAfterMs, error.detail]).toEqual(['rate_limited', 429, 7000, undefined]);
    expect(customerProviderMessage(error)).toBe("the provider is limiting the platform's rate (429)");
    expect(error.message).toContain('org-platform');
  });

  it('when the reason is very long, then the customer reads at most 500 characters of it', async () => {
    const upstream = await answeringUpstream(422, { error: { message: 'x'.repeat(5000) } });
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    await upstream.close();
    expect(error.detail!.length).toBeLessThanOrEqual(500);
  });

  it('when the reason echoes a long input of the request (as OpenAI quotes an invalid value), then the customer\'s copy takes milliseconds to make, not seconds of the event loop', () => {
    // 32 KiB of "a-a-…": each pattern tried from every word boundary to the end took some 5 s.
    const reason = `Invalid value: '${'a-'.repeat(16 * 1024)}'. Supported values are: 'system', 'user' (see https://10.0.0.7:8443/docs).`;
    const started = performance.now();
    const detail = customerDetail(reason, { name: ENTRY, baseUrl: 'http://10.0.0.7:8443/v1', secrets: [PLATFORM_KEY] });
    expect(performance.now() - started).toBeLessThan(500);
    // The quoted word is cut: left out whole, as a cut word is.
    expect(detail).toBe('Invalid value: …');
  });

  it('when a long reason is cut in the middle of an address, then no part of the address is left for the customer', () => {
    // Ten long URLs (each becomes "[url]"), then an address across the cut at 1,000 characters.
    const urls = Array.from({ length: 10 }, (_, i) => `https://docs.example/${String(i).repeat(77)}`).join(' ');
    const detail = customerDetail(`${urls} at 10.20.30.40:8443 refused`, { name: ENTRY, baseUrl: 'http://upstream.internal/v1', secrets: [] });
    expect(detail).not.toMatch(/10\.20/);
    expect(detail).toMatch(/^\[url\]( \[url\]){9}/);
  });

  it('when the body is not an error object (a proxy\'s page), then the customer reads the status only', async () => {
    const upstream = await answeringUpstream(404, `<html>${ENTRY} at 10.1.2.3 not found</html>`);
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    await upstream.close();
    expect(customerProviderMessage(error)).toBe('the provider rejected the request (404)');
    expect(error.message).toContain('10.1.2.3');
  });

  it('when the request is over the entry\'s size limit, then the customer is told the limit, not the entry', async () => {
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: 'http://127.0.0.1:9/v1', maxBodyBytes: 10 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    expect(customerProviderMessage(error)).toBe("the provider rejected the request (413): the request body is over the provider's limit of 10 bytes");
  });
});

describe('an upstream that cannot be reached', () => {
  it('when nothing listens (ECONNREFUSED), then the customer reads that the provider could not be reached, no address; the log has the address', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v1`;
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: url, apiKey: PLATFORM_KEY, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['unavailable', undefined]);
    const customer = customerProviderMessage(error);
    expect(customer).toBe('the provider could not be reached');
    expectNothingInternal(customer, url);
    expect(error.message).toContain(ENTRY);
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('when the host does not resolve (ENOTFOUND), then the customer reads the same, without the host', async () => {
    const url = 'http://upstream.invalid/v1';
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: url, maxBodyBytes: 4096 });
    const error = await rejection(provider.complete(chatCall()));
    await provider.close();
    expect(customerProviderMessage(error)).toBe('the provider could not be reached');
    expect(error.message).toContain('upstream.invalid');
  });
});
