// The call a chat request makes upstream, in the wire of the profile that serves it. A request
// on one wire served by a profile of the other is translated here, before anything is held:
// only an exact translation is sent (providers/translate), anything else is refused with 400.

import type { ChatWire, ResolvedProfile } from '../../../catalog/catalog';
import { GatewayError } from '../../../lib/errors';
import type { ChatCall, ChatProvider, MessagesCall, MessagesProvider } from '../../../providers/port';
import { chatCallToMessagesCall, InexactTranslationError, messagesCallToChatCall } from '../../../providers/translate';

/** The adapters of one provider entry a chat can be served by. */
export interface ChatAdapters {
  chat?: ChatProvider;
  messages?: MessagesProvider;
}

export type UnsignedChatCall = Omit<ChatCall, 'signal'>;
export type UnsignedMessagesCall = Omit<MessagesCall, 'signal'>;

export type Upstream =
  | { wire: 'openai-chat'; provider: ChatProvider; call: UnsignedChatCall }
  | { wire: 'anthropic-messages'; provider: MessagesProvider; call: UnsignedMessagesCall };

/** The request as its inbound wire gives it: one of the two call shapes. */
export type InboundCall = { wire: 'openai-chat'; call: UnsignedChatCall } | { wire: 'anthropic-messages'; call: UnsignedMessagesCall };

/** Translation functions need a signal; the real one is attached when the call is made. */
const NEVER = new AbortController().signal;

function translated<T>(translate: () => T): T {
  try {
    return translate();
  } catch (error) {
    if (error instanceof InexactTranslationError) {
      throw new GatewayError('wire_translation_inexact', `this model is served on another wire and ${error.message}; the request cannot be translated exactly`, { param: error.param });
    }
    throw error;
  }
}

export function upstreamFor(resolved: ResolvedProfile, adapters: ChatAdapters | undefined, inbound: InboundCall): Upstream {
  const wire = resolved.profile.wire_format as ChatWire;
  const unserved = () => new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider for ${wire}`);
  if (wire === 'openai-chat') {
    if (!adapters?.chat) throw unserved();
    const call = inbound.wire === 'openai-chat' ? inbound.call : translated(() => withoutSignal(messagesCallToChatCall({ ...inbound.call, signal: NEVER })));
    return { wire, provider: adapters.chat, call };
  }
  if (!adapters?.messages) throw unserved();
  const call = inbound.wire === 'anthropic-messages' ? inbound.call : translated(() => withoutSignal(chatCallToMessagesCall({ ...inbound.call, signal: NEVER })));
  return { wire, provider: adapters.messages, call };
}

function withoutSignal<T extends { signal: AbortSignal }>(call: T): Omit<T, 'signal'> {
  const { signal: _signal, ...rest } = call;
  return rest;
}
