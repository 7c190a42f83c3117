// Server-Sent Events as a client reads them (eventsource-parser: the spec's grammar), for
// tests: whole events only, a frame cut in half is not an event.

import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type SseEvent = EventSourceMessage;

/** The complete events of a whole SSE body, in order. */
export function sseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  createParser({ onEvent: (event) => events.push(event) }).feed(text);
  return events;
}

/** The data payloads of a whole SSE body, in order. */
export function sseData(text: string): string[] {
  return sseEvents(text).map((event) => event.data);
}

/** The comment lines of a whole SSE body (the text after ':'), in order. */
export function sseComments(text: string): string[] {
  const comments: string[] = [];
  createParser({ onEvent: () => undefined, onComment: (comment) => comments.push(comment) }).feed(text);
  return comments;
}

/** Reads an SSE body incrementally: each chunk's decoded text in, complete events handed to `onEvent`. */
export function sseReader(onEvent: (event: SseEvent) => void): { feed(text: string): void } {
  return createParser({ onEvent });
}
