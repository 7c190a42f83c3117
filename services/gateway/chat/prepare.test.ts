import { join } from 'node:path';
import { Catalog, loadCatalog } from '../../../catalog/catalog';
import { createProviders } from '../../../providers/registry';
import { onebitPng, pdf } from '../../../test/support/media';
import type { Caller } from '../middleware/auth';
import { countedPrompt, prepareChat, type AnyWire, type ChatDeps } from './prepare';
import { anthropicWire, openAiWire } from './wires';

// sim-chat of the default catalog: input 100, output 400 nano-USD a token, served by the simulated provider.
const file = loadCatalog(join(__dirname, '../../../catalog/default-catalog.json')).file;
const simChat = file.models[0];
const catalog = new Catalog({
  ...file,
  // The same model, for a provider whose images cost up to 48,169 tokens (one of OpenAI's small models multiplies them).
  models: [...file.models, {
    ...simChat, id: 'dear-images-chat', limits: { ...simChat.limits, max_image_tokens: 48_169 },
    profiles: simChat.profiles.map((profile, i) => ({ ...profile, profile_id: `0d1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e0${i}` })),
  }],
});
const deps = { catalog, providers: createProviders(file.providers), maxBodyBytes: 32 * 1024 * 1024, capabilityGates: { providers: new Set(['sim']), accepted: new Set() } } as unknown as ChatDeps;

const caller = { accountId: 'a', scopes: [] } as unknown as Caller;
const prepared = (body: Record<string, unknown>, options: { model?: string; anthropic?: boolean } = {}) => {
  const bodyBytes = Buffer.byteLength(JSON.stringify(body));
  const chat = prepareChat(deps, (options.anthropic ? anthropicWire : openAiWire) as unknown as AnyWire, { modelId: options.model ?? 'sim-chat', body, bodyBytes, caller, requestId: 'r', pool: 'pool-3', capabilities: [] });
  return { chat, bodyBytes };
};
const estimateOf = (body: Record<string, unknown>, options: { model?: string; anthropic?: boolean } = {}) => {
  const { chat, bodyBytes } = prepared(body, options);
  return { estimate: chat.estimate, bodyBytes };
};

describe('the reservation estimate of a chat with inline images and PDFs', () => {
  const png = onebitPng(1568, 1568).toString('base64');
  const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } };

  it('when a body has text only, then it is its bytes and max_tokens, as before', () => {
    const { estimate, bodyBytes } = estimateOf({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], max_tokens: 8 });
    expect(estimate).toBe(bodyBytes * 100 + 8 * 400);
  });

  it('when the simulated provider serves a tiny 1568×1568 PNG, then the larger rule (Anthropic\'s 1,600) is added beyond its base64', () => {
    const { estimate, bodyBytes } = estimateOf({ messages: [{ role: 'user', content: [image] }], max_tokens: 8 });
    expect(estimate).toBe((bodyBytes + 1600 - image.image_url.url.length) * 100 + 8 * 400);
  });

  it('when the model states its own most for one image, then every image and PDF page image is held at it', () => {
    const data = pdf(3).toString('base64');
    const document = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } };
    const withImage = estimateOf({ messages: [{ role: 'user', content: [image] }], max_tokens: 8 }, { model: 'dear-images-chat' });
    expect(withImage.estimate).toBe((withImage.bodyBytes + 48_169 - image.image_url.url.length) * 100 + 8 * 400);
    const withPdf = estimateOf({ messages: [{ role: 'user', content: [document] }], max_tokens: 8 }, { model: 'dear-images-chat', anthropic: true });
    expect(withPdf.estimate).toBe((withPdf.bodyBytes + 3 * (48_169 + 3000) - data.length) * 100 + 8 * 400);
  });
});

describe('the prompt the gateway counts when the provider did not state it (a cut stream)', () => {
  const data = onebitPng(1568, 1568).toString('base64');
  const url = `data:image/png;base64,${data}`;

  it('when an OpenAI-wire prompt has an inline image, then its messages\' bytes less the image\'s characters / 4, plus the image by its pixels (the simulated provider: the larger rule, Anthropic\'s 1,600)', async () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url } }] }];
    const { chat } = prepared({ messages, max_tokens: 8 });
    expect(await countedPrompt(chat)).toBe(Math.ceil((Buffer.byteLength(JSON.stringify(messages)) - url.length) / 4) + 1600);
    // A 512×512 image: OpenAI's one tile (255) against Anthropic's 19 × 19 patches of 28 px (361).
    const small = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${onebitPng(512, 512).toString('base64')}` } }] }];
    expect(await countedPrompt(prepared({ messages: small, max_tokens: 8 }).chat)).toBe(Math.ceil((Buffer.byteLength(JSON.stringify(small)) - small[0].content[0].image_url.url.length) / 4) + 361);
  });

  it('when an Anthropic-wire prompt has an inline image and PDF, then the body\'s bytes less their characters / 4, plus each as it is bounded by its pixels and pages', async () => {
    const document = pdf(2).toString('base64');
    const body = { max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: document } }] }] };
    const { chat, bodyBytes } = prepared(body, { anthropic: true });
    expect(await countedPrompt(chat)).toBe(Math.ceil((bodyBytes - data.length - document.length) / 4) + 1600 + 2 * (1600 + 3000));
  });

  it('when the model states its own most for one image, then an image read is counted in proportion to it, never above it', async () => {
    const count = async (image: string) => {
      const messages = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }];
      return (await countedPrompt(prepared({ messages, max_tokens: 8 }, { model: 'dear-images-chat' }).chat)) - Math.ceil((Buffer.byteLength(JSON.stringify(messages)) - image.length) / 4);
    };
    // 512×512: the larger rule's 361 of its most 1,600, in proportion to 48,169; 1568×1568: the rule's most, so the model's.
    expect(await count(`data:image/png;base64,${onebitPng(512, 512).toString('base64')}`)).toBe(Math.floor((361 * 48_169) / 1600));
    expect(await count(url)).toBe(48_169);
  });
});
