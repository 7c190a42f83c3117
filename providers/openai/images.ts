// OpenAI-compatible images adapter: POST {baseUrl}/images/generations for exactly one image,
// through the HTTP client of its provider entry (./client.ts, shared with the chat adapter:
// same pool, same failure mapping). The task id goes upstream as the Idempotency-Key header,
// so an upstream that honours it answers a repeated call with the first call's image.
//
// The answer is read strictly: one image, in exactly the form asked for (url or b64_json),
// with a numeric `created`; anything else is a 'protocol' error.
//
// No lookup(): the OpenAI images API keeps nothing a client can ask about later (there is no
// way to fetch the outcome of an earlier generation), so an unanswered call stays unresolved.

import { ProviderError, type ImageArtifact, type ImageCall, type ImageProvider } from '../port';
import { OpenAiAdapter, readJsonObject, type OpenAiAdapterOptions } from './client';
import { asArray, asObject, badShape, type Json } from './shape';

/** Own connection settings, or the client shared with the entry's other adapters. */
export type OpenAiImageProviderOptions = OpenAiAdapterOptions;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export class OpenAiImageProvider extends OpenAiAdapter implements ImageProvider {
  async generate(call: ImageCall): Promise<ImageArtifact> {
    // A streamed generation (partial images) is not what this call waits for.
    const { stream: _s, partial_images: _p, ...passthrough } = call.passthrough;
    const payload = { ...passthrough, model: call.upstreamModel, prompt: call.prompt, n: 1, response_format: call.responseFormat };
    const { body } = await this.client.post('/images/generations', payload, call.signal, 'json', { 'idempotency-key': call.taskId });
    return toArtifact(await readJsonObject(body, call.signal), call.responseFormat);
  }
}

function toArtifact(json: Json, format: ImageCall['responseFormat']): ImageArtifact {
  const created = json.created;
  if (typeof created !== 'number' || !Number.isSafeInteger(created)) badShape('created');
  const data = asArray(json.data, 'data');
  if (data.length !== 1) throw new ProviderError('protocol', `upstream answered ${data.length} images, asked for 1`);
  const image = asObject(data[0], 'data[0]');
  const other = format === 'url' ? 'b64_json' : 'url';
  if (image[other] !== undefined && image[other] !== null) {
    throw new ProviderError('protocol', `upstream answered ${other}, asked for ${format}`);
  }
  const revised = image.revised_prompt;
  if (revised !== undefined && revised !== null && typeof revised !== 'string') badShape('data[0].revised_prompt');
  const artifact: ImageArtifact = format === 'url' ? { url: urlOf(image.url), created } : { b64Json: base64Of(image.b64_json), created };
  if (typeof revised === 'string') artifact.revisedPrompt = revised;
  return artifact;
}

function urlOf(value: unknown): string {
  return typeof value === 'string' && URL.canParse(value) ? value : badShape('data[0].url');
}

function base64Of(value: unknown): string {
  return typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value) ? value : badShape('data[0].b64_json');
}
