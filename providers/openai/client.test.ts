import { startUpstream, type Upstream } from '../../test/support/upstream';
import { OpenAiChatProvider } from './chat';
import { OpenAiClient } from './client';
import { OpenAiImageProvider } from './images';

let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});

afterAll(() => upstream.close());

const signal = (): AbortSignal => new AbortController().signal;
const chatCall = () => ({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, passthrough: {}, signal: signal() });
const imageCall = () => ({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url' as const, passthrough: {}, sentAt: Date.now(), signal: signal() });

describe('OpenAiClient shared by adapters', () => {
  it('when adapters are built on a client, then they take its name and limit', async () => {
    const client = new OpenAiClient({ name: 'shared', baseUrl: upstream.url, maxBodyBytes: 4096 });
    const chat = new OpenAiChatProvider({ client });
    const images = new OpenAiImageProvider({ client });
    expect([chat.name, chat.maxBodyBytes, images.name, images.maxBodyBytes]).toEqual(['shared', 4096, 'shared', 4096]);
    await client.close();
  });

  it('when an adapter on a shared client is closed, then the client and its sibling keep working', async () => {
    const client = new OpenAiClient({ name: 'shared', baseUrl: upstream.url, maxBodyBytes: 4096 });
    const chat = new OpenAiChatProvider({ client });
    await new OpenAiImageProvider({ client }).close();
    await expect(chat.complete(chatCall())).resolves.toMatchObject({ content: 'tok0 tok1' });
    await client.close();
  });

  it('when an adapter built from settings is closed, then its own pool refuses further calls', async () => {
    const images = new OpenAiImageProvider({ name: 'own', baseUrl: upstream.url, maxBodyBytes: 4096 });
    await images.close();
    await expect(images.generate(imageCall())).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('when the client is closed again, during and after the first close, then every close resolves', async () => {
    const client = new OpenAiClient({ name: 'twice', baseUrl: upstream.url, maxBodyBytes: 4096 });
    await expect(Promise.all([client.close(), client.close()])).resolves.toEqual([undefined, undefined]);
    await expect(client.close()).resolves.toBeUndefined();
  });
});
