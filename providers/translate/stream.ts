// Streams translated event by event. The translation is an async generator over the
// source; a consumer who gives up must reach the source at once (its adapter then cancels
// the upstream), which a generator alone does not do before its first next() or while a
// next() is pending.

import { ProviderError } from '../port';

export function translatedStream<In, Out>(source: AsyncIterable<In>, translate: (items: AsyncIterable<In>) => AsyncGenerator<Out, void, undefined>): AsyncIterable<Out> {
  return {
    [Symbol.asyncIterator]: () => {
      const upstream = source[Symbol.asyncIterator]();
      const out = translate({ [Symbol.asyncIterator]: () => upstream });
      return {
        next: () => out.next(),
        return: async () => {
          // The source first: a pending next() of the translation only settles once it does.
          const closing = Promise.resolve(upstream.return?.()).catch(() => undefined);
          const result = await out.return(undefined);
          await closing;
          return result;
        },
      };
    },
  };
}

/** The upstream broke its wire's rules or the request's: the answer cannot be given. */
export function brokenAnswer(message: string): ProviderError {
  return new ProviderError('protocol', message);
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** OpenAI's chat ids and Anthropic's message ids, each made from the other. */
export function chatIdOf(messageId: string): string {
  return `chatcmpl-${messageId.replace(/^msg_/, '')}`;
}

export function messageIdOf(chatId: string): string {
  return `msg_${chatId.replace(/^chatcmpl-/, '')}`;
}
