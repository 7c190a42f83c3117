// PAYG text chat, as a story: check the model and the limits, reserve the estimate on the
// account's FundsHold, call the provider with the frozen max_tokens, settle for the actual
// usage (never above the hold) or release when nothing was produced.

import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import type { UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import { requireEligible, type Catalog, type ResolvedProfile } from '../../../catalog/catalog';
import { GatewayError } from '../../../lib/errors';
import { ProviderError, type ChatCall, type ChatProvider, type ChatStreamChunk, type SimDirectives, type TokenUsage } from '../../../providers/port';
import type { Caller } from '../middleware/auth';
import { checkBodySize, checkThinkingBudget, effectiveMaxTokens, rejectUnsupported, reservationEstimate } from './limits';
import { GATEWAY_FIELDS, parseChatBody, type ChatBody } from './request';

export interface ChatDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, ChatProvider>;
  funds: FundsHoldClient;
  maxBodyBytes: number;
  providerTimeoutMs: number;
  holdTtlMs: number;
  logger: Logger;
}

export interface ChatInput {
  modelId: string;
  body: unknown;
  bodyBytes: number;
  caller: Caller;
  requestId: string;
  directives?: SimDirectives;
}

interface PreparedChat {
  resolved: ResolvedProfile;
  provider: ChatProvider;
  body: ChatBody;
  maxTokens: number;
  estimate: number;
  prices: { input: number; output: number };
  inputBytes: number;
}

/** Everything that can refuse a request, before anything is held. */
export function prepareChat(deps: ChatDeps, input: ChatInput): PreparedChat {
  const resolved = deps.catalog.resolve(input.modelId, 'openai-chat');
  const provider = deps.providers.get(resolved.profile.provider);
  if (!provider) throw new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider`);
  checkBodySize(input.bodyBytes, [deps.maxBodyBytes, provider.maxBodyBytes, resolved.model.limits.max_body_bytes ?? Infinity]);
  const body = parseChatBody(input.body);
  rejectUnsupported(body);
  const maxTokens = effectiveMaxTokens(body.max_tokens, resolved.model.limits);
  checkThinkingBudget(body.thinking, maxTokens);
  const output = requireEligible(resolved.model, 'TEXT_OUTPUT');
  const prices = { input: resolved.model.prices.TEXT_INPUT ?? 0, output };
  const estimate = reservationEstimate(input.bodyBytes, maxTokens, prices.input, prices.output);
  return { resolved, provider, body, maxTokens, estimate, prices, inputBytes: input.bodyBytes };
}

function usageLines(prices: PreparedChat['prices'], usage: TokenUsage): UsageLine[] {
  return [
    { unit: 'TEXT_INPUT', quantity: usage.inputTokens, unitPrice: prices.input },
    { unit: 'TEXT_OUTPUT', quantity: usage.outputTokens, unitPrice: prices.output },
  ];
}

function providerCall(chat: PreparedChat, signal: AbortSignal, directives?: SimDirectives): ChatCall {
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(chat.body)) if (!GATEWAY_FIELDS.has(key)) passthrough[key] = value;
  return { upstreamModel: chat.resolved.profile.upstream_model, messages: chat.body.messages as ChatCall['messages'], maxTokens: chat.maxTokens, passthrough, directives, signal };
}

export function toGatewayProviderError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof ProviderError) {
    if (error.kind === 'rejected') return new GatewayError('provider_rejected', `the provider rejected the request${error.upstreamStatus ? ` (${error.upstreamStatus})` : ''}: ${error.message}`);
    if (error.kind === 'timeout') return new GatewayError('provider_timeout', 'the provider did not answer in time');
    return new GatewayError('provider_error', `the provider failed: ${error.message}`);
  }
  return new GatewayError('provider_error', 'the provider failed');
}

export async function runChat(deps: ChatDeps, input: ChatInput, res: Response): Promise<void> {
  const chat = prepareChat(deps, input);
  const funds = deps.funds.of(input.caller.accountId);
  const holdId = randomUUID();
  await funds.reserve({ holdId, amount: chat.estimate, ttlMs: deps.holdTtlMs, requestId: input.requestId, model: chat.resolved.model.id, profileId: chat.resolved.profile.profile_id });

  const abort = new AbortController();
  const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(deps.providerTimeoutMs)]);
  res.on('close', () => {
    if (!res.writableFinished) abort.abort(new Error('client disconnected'));
  });
  const call = providerCall(chat, signal, input.directives);
  const release = (reason: string) => funds.release({ holdId, reason }).catch((error) => deps.logger.error({ err: error, holdId }, 'release failed; the hold expires by itself'));
  const settle = (usage: TokenUsage) => funds.settle({ holdId, lines: usageLines(chat.prices, usage) });

  if (chat.body.stream !== true) {
    let completion;
    try {
      completion = await chat.provider.complete(call);
    } catch (error) {
      await release('provider_failed');
      throw toGatewayProviderError(error);
    }
    const settled = await settle(completion.usage);
    res.setHeader('x-payg-charged', String(settled.charged));
    res.json({
      id: completion.id,
      object: 'chat.completion',
      created: completion.created,
      model: chat.resolved.model.id,
      choices: [{ index: 0, message: { role: 'assistant', content: completion.content }, finish_reason: completion.finishReason }],
      usage: { prompt_tokens: completion.usage.inputTokens, completion_tokens: completion.usage.outputTokens, total_tokens: completion.usage.inputTokens + completion.usage.outputTokens },
    });
    return;
  }
  await streamChat(deps, chat, call, res, { release, settle, holdId });
}

async function streamChat(
  deps: ChatDeps,
  chat: PreparedChat,
  call: ChatCall,
  res: Response,
  hold: { release: (reason: string) => Promise<unknown>; settle: (usage: TokenUsage) => Promise<unknown>; holdId: string },
): Promise<void> {
  let chunks: AsyncIterable<ChatStreamChunk>;
  try {
    chunks = await chat.provider.stream(call);
  } catch (error) {
    await hold.release('provider_failed');
    throw toGatewayProviderError(error);
  }
  const includeUsage = chat.body.stream_options?.include_usage === true;
  let outputTokens = 0;
  let reported: TokenUsage | undefined;
  let failure: unknown;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  try {
    for await (const piece of chunks) {
      if (piece.usage) reported = piece.usage;
      if (piece.outputDelta) outputTokens += 1;
      if (piece.usage && !includeUsage) continue;
      piece.chunk.model = chat.resolved.model.id;
      if (!res.destroyed) res.write(`data: ${JSON.stringify(piece.chunk)}\n\n`);
    }
  } catch (error) {
    failure = error;
  }
  // Charged for what was produced: the provider's own count when it gave one, else one token per
  // relayed delta and the input bounded by bytes/4 (docs/billing.md). Nothing produced: released.
  const produced = reported ?? { inputTokens: Math.ceil(chat.inputBytes / 4), outputTokens };
  if (!reported && outputTokens === 0) await hold.release(failure ? 'provider_failed' : 'client_disconnected');
  else await hold.settle(produced).catch((error) => deps.logger.error({ err: error, holdId: hold.holdId }, 'settle failed; the hold expires by itself'));
  if (res.destroyed) return;
  if (failure && !call.signal.aborted) {
    const error = toGatewayProviderError(failure);
    res.write(`data: ${JSON.stringify({ error: { code: error.code, message: error.message } })}\n\n`);
  } else if (failure) {
    const error = new GatewayError('provider_timeout', 'the provider did not finish in time');
    res.write(`data: ${JSON.stringify({ error: { code: error.code, message: error.message } })}\n\n`);
  } else {
    res.write('data: [DONE]\n\n');
  }
  res.end();
}
