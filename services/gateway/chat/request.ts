// The chat bodies the gateway accepts, one schema per inbound wire. Limits are checked by
// limits.ts with their own codes; these schemas only fix the shape.

import { z } from 'zod';
import { GatewayError } from '../../../lib/errors';
import { parseJsonObject, requireJsonObject } from '../json-object';
import { base64ImageSize, base64PdfPages, dataUrlBase64, type ImageSize, type InlineMedia } from './inline-media';

const openAiMessage = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
});

export const chatBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(openAiMessage).min(1),
  // null: not streamed, as OpenAI reads it (the OpenAI SDKs type the field nullable).
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});

export type ChatBody = z.infer<typeof chatBodySchema> & Record<string, unknown>;

const anthropicMessage = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(z.unknown())]),
});

export const messagesBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(anthropicMessage).min(1),
  system: z.union([z.string(), z.array(z.unknown())]).optional(),
  stream: z.boolean().optional(),
});

export type MessagesBody = z.infer<typeof messagesBodySchema> & Record<string, unknown>;

/** Fields the gateway owns on either wire: never passed through to the provider as given. */
export const GATEWAY_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'n']);

/** The model a body names (compatibility routes, session runs): a catalog id, required. */
export function requireBodyModel(body: unknown): string {
  const model = requireJsonObject(body).model;
  if (typeof model !== 'string' || model.length === 0) throw new GatewayError('invalid_request', 'model: a model id is required', { param: 'model' });
  return model;
}

/** A chat body, shape-checked, and its inline images and PDFs (undefined: none), bounded by their pixels and pages (./inline-media.ts). */
export interface ParsedBody<B> {
  body: B;
  media?: InlineMedia[];
}

export function parseChatBody(body: unknown): ParsedBody<ChatBody> {
  const parsed = parseJsonObject(chatBodySchema, body) as ChatBody;
  return { body: parsed, media: checkChatFields(parsed) };
}

/** The service tiers whose price is the catalog's: the provider's standard processing. */
const STANDARD_TIERS = new Set(['auto', 'default']);

/**
 * The OpenAI-wire fields that make the provider bill beyond the tokens the catalog prices, refused
 * before anything is held (the rest of the body goes to the provider as given): a service tier
 * other than the standard one (priority processing costs more per token), web search (a fee per
 * search), audio output and input (audio tokens, priced apart) and content the provider fetches
 * (its tokens are not bounded by the request's bytes).
 */
function checkChatFields(body: ChatBody): InlineMedia[] | undefined {
  const tier = body.service_tier;
  if (tier !== undefined && tier !== null && !(typeof tier === 'string' && STANDARD_TIERS.has(tier))) refuse('service_tier', 'only "auto" or "default" on this gateway (another tier is billed at prices the catalog does not hold)');
  if (body.web_search_options !== undefined && body.web_search_options !== null) refuse('web_search_options', 'not supported on this gateway (its per-search fees cannot be reserved before the call)');
  if (body.audio !== undefined && body.audio !== null) refuse('audio', 'not supported on this gateway (audio output is billed at prices the catalog does not hold)');
  const modalities = body.modalities;
  if (modalities !== undefined && modalities !== null && !(Array.isArray(modalities) && modalities.every((m) => m === 'text'))) refuse('modalities', 'only ["text"] on this gateway');
  let media: InlineMedia[] | undefined;
  body.messages.forEach((message, m) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part, p) => {
      const inline = checkContentPart(part, `messages[${m}].content[${p}]`);
      if (inline) (media ??= []).push(inline);
    });
  });
  return media;
}

/**
 * A content part whose prompt tokens the request's bytes do not bound, or that is billed at
 * prices the catalog does not hold: an image the provider fetches from a URL (a few bytes of
 * address, hundreds or thousands of tokens of image), a file stored with the provider, audio
 * input. The same image or file sent inline (a data: URL, `file_data`) is returned, to be
 * bounded by its pixels or pages (./inline-media.ts).
 */
function checkContentPart(part: unknown, at: string): InlineMedia | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const { type, image_url: image, file } = part as { type?: unknown; image_url?: { url?: unknown; detail?: unknown } | string | null; file?: { file_id?: unknown; file_data?: unknown } | null };
  // OpenAI's { url } object; some OpenAI-compatible clients send the URL as the string itself.
  const url = typeof image === 'string' ? image : image?.url;
  if (type === 'image_url' && !(typeof url === 'string' && /^data:/i.test(url))) refuse(`${at}.image_url${typeof image === 'string' ? '' : '.url'}`, 'an image fetched from a URL is not supported (send it inline as a data: URL)');
  if (type === 'file' && file?.file_id !== undefined && file?.file_id !== null) refuse(`${at}.file.file_id`, 'a file stored with the provider is not supported (send it inline as file_data)');
  if (type === 'input_audio') refuse(`${at}.input_audio`, 'not supported on this gateway (audio input is billed at prices the catalog does not hold)');
  if (type === 'image_url' && typeof url === 'string') {
    const base64 = dataUrlBase64(url);
    const detail = typeof image === 'object' && typeof image?.detail === 'string' ? image.detail : undefined;
    return { type: 'image', chars: url.length, ...sizeOf(base64), ...(detail !== undefined ? { detail } : {}) };
  }
  if (type === 'file' && typeof file?.file_data === 'string') {
    // A data: URL (as OpenAI documents it), or the bare base64.
    const data = file.file_data;
    return { type: 'pdf', chars: data.length, ...pagesOf(/^data:/i.test(data) ? dataUrlBase64(data) : data) };
  }
  return undefined;
}

function sizeOf(base64: string | undefined): { size?: ImageSize } {
  const size = base64 === undefined ? undefined : base64ImageSize(base64);
  return size ? { size } : {};
}

function pagesOf(base64: string | undefined): { pages?: number } {
  const pages = base64 === undefined ? undefined : base64PdfPages(base64);
  return pages !== undefined ? { pages } : {};
}

/**
 * The Messages fields the gateway can bill from the request it holds for. Everything else is
 * refused before anything is held: server tools, MCP servers, containers and service tiers
 * carry fees the estimate cannot bound, and so does content fetched from a URL.
 */
const MESSAGES_FIELDS = new Set(['model', 'messages', 'system', 'max_tokens', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata', 'thinking', 'tools', 'tool_choice']);

function refuse(param: string, why: string): never {
  throw new GatewayError('invalid_request', `${param}: ${why}`, { param });
}

function checkMessagesFields(body: MessagesBody): InlineMedia[] | undefined {
  for (const key of Object.keys(body)) if (!MESSAGES_FIELDS.has(key)) refuse(key, 'not supported on this gateway (its cost cannot be reserved before the call)');
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, i) => {
      const type = (tool as { type?: unknown } | null)?.type;
      if (type === undefined || type === 'custom') return;
      // Anthropic's client tools run on the client, but Anthropic adds their definitions and system prompt to the prompt.
      if (typeof type === 'string' && /^(bash|text_editor|computer)_/.test(type)) refuse(`tools[${i}].type`, `Anthropic-defined tool "${type}" is not supported (it adds prompt tokens the request does not carry, so its cost cannot be reserved); define the tool as a custom tool`);
      refuse(`tools[${i}].type`, `server tool "${String(type)}" is not supported (its per-use fees cannot be reserved)`);
    });
  }
  let media: InlineMedia[] | undefined;
  body.messages.forEach((message, m) => {
    if (Array.isArray(message.content)) media = checkBlocks(message.content, `messages[${m}].content`, media);
  });
  return media;
}

/**
 * Content the provider fetches (from a URL, or a file stored with it), wherever a block nests
 * it: a tool result's content, a document's content source. Its tokens are not bounded by the
 * request's bytes. An inline image or PDF (a base64 source) is added to `media`, to be bounded
 * by its pixels or pages (./inline-media.ts).
 */
function checkBlocks(blocks: unknown[], at: string, found: InlineMedia[] | undefined): InlineMedia[] | undefined {
  let media = found;
  blocks.forEach((block, b) => {
    if (typeof block !== 'object' || block === null) return;
    const { type, source, content } = block as { type?: unknown; source?: { type?: unknown; content?: unknown; data?: unknown } | null; content?: unknown };
    if (source?.type === 'url') refuse(`${at}[${b}].source`, 'content fetched from a URL is not supported (send it inline)');
    if (source?.type === 'file') refuse(`${at}[${b}].source`, 'a file stored with the provider is not supported (send it inline)');
    if (source?.type === 'base64' && typeof source.data === 'string') {
      if (type === 'image') (media ??= []).push({ type: 'image', chars: source.data.length, ...sizeOf(source.data) });
      // A base64 document is a PDF (Anthropic's only base64 document type).
      if (type === 'document') (media ??= []).push({ type: 'pdf', chars: source.data.length, ...pagesOf(source.data) });
    }
    if (Array.isArray(content)) media = checkBlocks(content, `${at}[${b}].content`, media);
    if (Array.isArray(source?.content)) media = checkBlocks(source.content, `${at}[${b}].source.content`, media);
  });
  return media;
}

export function parseMessagesBody(body: unknown): ParsedBody<MessagesBody> {
  const parsed = parseJsonObject(messagesBodySchema, body) as MessagesBody;
  return { body: parsed, media: checkMessagesFields(parsed) };
}

/** The body without the gateway's own fields: what goes to the provider unchanged. */
export function passthroughOf(body: Record<string, unknown>): Record<string, unknown> {
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!GATEWAY_FIELDS.has(key)) passthrough[key] = value;
  return passthrough;
}
