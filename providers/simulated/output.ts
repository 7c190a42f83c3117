// What the simulated chat and messages adapters share: everything that happens before any
// output (directives and the caller's signal), and the deterministic output itself.
//
// Output is `tokens` words (directive, default 16, capped by max_tokens): tok0 tok1 … .

import { abortedCallError, untilAborted } from '../abort';
import { ProviderError, type SimDirectives } from '../port';

export const SIM_DEFAULT_OUTPUT_TOKENS = 16;

export interface OutputPlan {
  tokens: number;
  /** True when max_tokens cut the output short of the tokens wanted. */
  cut: boolean;
}

/** The call fields the shared steps look at: the chat and messages calls both have them. */
export interface SimCall {
  maxTokens: number;
  directives?: SimDirectives;
  signal: AbortSignal;
}

/** Abort, rejection, failure and hang: all before any output, first that applies. */
export async function beforeOutput(call: Omit<SimCall, 'maxTokens'>): Promise<void> {
  const d = call.directives ?? {};
  if (call.signal.aborted) throw abortedCallError(call.signal);
  if (d.reject) throw new ProviderError('rejected', 'simulated rejection', 400, undefined, { detail: 'simulated rejection' });
  if (d.failBeforeOutput) throw new ProviderError('unavailable', 'simulated failure before output', 503);
  if (d.hang) await untilAborted(call.signal);
}

export function planTokens(call: SimCall): OutputPlan {
  const wanted = call.directives?.outputTokens ?? SIM_DEFAULT_OUTPUT_TOKENS;
  return { tokens: Math.max(0, Math.min(wanted, call.maxTokens)), cut: wanted > call.maxTokens };
}

/** A non-streamed answer breaks where its stream of `events` events would have. */
export function breakLikeStream(call: SimCall, events: number): void {
  const failAfter = call.directives?.failAfterChunks;
  if (failAfter !== undefined && failAfter < events) throw simulatedBreak(failAfter);
}

export function simulatedBreak(failAfter: number): ProviderError {
  return new ProviderError('protocol', `simulated break after ${failAfter} chunks`);
}

/** ceil(UTF-8 bytes of the JSON of `input` / 4): a stand-in for a tokenizer. */
export function simInputTokens(input: unknown): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(input), 'utf8') / 4);
}

/** Words from..to-1, space-joined, with a leading space unless from is 0. */
export function words(from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += i === 0 ? 'tok0' : ` tok${i}`;
  return text;
}
