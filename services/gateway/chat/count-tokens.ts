// Counting a prompt without running it (POST /v1/messages/count_tokens): free, nothing held.
// The count is the provider's own where it has one (Anthropic's count_tokens endpoint; the
// simulated provider's rule), else the gateway's as for a cut stream (./prepare.ts,
// countedPrompt: the profile's tokenizer, else the byte estimate). The request is checked as a
// Messages call of the model would be, so a prompt the model would refuse is refused here too.

import { deadline, stoppedBy } from '../deadline';
import { countedPrompt, type ChatDeps, type PreparedChat } from './prepare';
import { logProviderFailure, toGatewayProviderError } from './provider-call';

export async function countPromptTokens(deps: Pick<ChatDeps, 'providerTimeoutMs' | 'logger'>, chat: PreparedChat): Promise<number> {
  const { upstream } = chat;
  if (upstream.wire !== 'anthropic-messages' || !upstream.provider.countTokens) return countedPrompt(chat);
  const { maxTokens: _maxTokens, ...call } = upstream.call;
  const { signal, clear } = deadline(new AbortController(), deps.providerTimeoutMs);
  try {
    return await upstream.provider.countTokens({ ...call, signal });
  } catch (error) {
    const stopped = stoppedBy(signal);
    if (!stopped) logProviderFailure(deps.logger, chat.route[0]?.provider, error, { operation: 'count_tokens' });
    throw stopped ?? toGatewayProviderError(error);
  } finally {
    clear();
  }
}
