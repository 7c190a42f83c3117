// Streams as a client sees them, for tests that cut them (kill -9): what was received, counted
// in whole SSE frames only (a frame cut in half was not delivered).

import { sseReader } from './sse';

export interface ClientStream {
  /** Output tokens received so far (complete frames carrying content). */
  received(): number;
  /** True once `[DONE]` arrived. */
  done(): boolean;
  /** The usage of the final chunk (stream_options.include_usage), once it arrived. */
  usage(): { prompt_tokens: number; completion_tokens: number } | undefined;
  /** When the response ended (ms since the epoch), once it has. */
  endedAt(): number | undefined;
  /** Resolves when the response ends or breaks (never rejects). */
  ended: Promise<void>;
}

export function startClientStream(url: string, apiKey: string, directive: string, maxTokens: number): ClientStream {
  // The data of every complete event received so far.
  const frames: string[] = [];
  const parser = sseReader((event) => frames.push(event.data));
  let finished = false;
  let endedAt: number | undefined;
  const ended = (async () => {
    try {
      const response = await fetch(`${url}/api/open/v1/models/sim-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': directive },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'count' }], max_tokens: maxTokens, stream: true, stream_options: { include_usage: true } }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      /* cut */
    }
    finished = true;
    endedAt = Date.now();
  })();
  return {
    received: () => frames.filter((data) => /"content":"[^"]/.test(data)).length,
    done: () => finished && frames.includes('[DONE]'),
    usage: () => {
      const data = frames.find((f) => f.includes('"usage"') && f.includes('"completion_tokens"'));
      return data ? JSON.parse(data).usage : undefined;
    },
    endedAt: () => endedAt,
    ended,
  };
}
