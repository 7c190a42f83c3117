// Incremental reader of Server-Sent Events that keeps only the `data:` payloads, over
// eventsource-parser (the spec's line and field grammar: LF, CRLF or CR line ends, events
// split across chunks or many in one chunk, comments, `event:`, `id:` and `retry:` fields).
// What this adds: bytes in (a multi-byte character may be split across chunks), the data
// payloads of the events each chunk completes out, and the end of the body closing an event
// that no blank line closed (the spec would drop it; an upstream that ends its body right
// after `data: [DONE]` still finished).

import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { ProviderError } from '../port';

const NONE: readonly string[] = Object.freeze([]);

/**
 * The most bytes read without an event completing (docs/providers.md, "Entries"). The parser keeps
 * an unfinished line and an undispatched event's data whole: an upstream sending one line that
 * never ends had it all kept in memory until the call's deadline (3 GB in 10 seconds).
 */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export class SseDataReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  /** Data of the events the chunk being fed completes; handed out and replaced per push. */
  private events: string[] = [];
  /** Bytes fed since the last chunk that completed an event. */
  private pending = 0;

  constructor(private readonly maxEventBytes = MAX_EVENT_BYTES) {
    this.parser = createParser({ onEvent: (event) => this.events.push(event.data) });
  }

  /**
   * Feeds bytes; returns the data of every event these bytes complete, in order. More than the
   * limit read without an event completing is the upstream's `protocol` error.
   */
  push(bytes: Buffer): readonly string[] {
    this.pending += bytes.length;
    if (this.pending > this.maxEventBytes) throw new ProviderError('protocol', `upstream sent more than ${this.maxEventBytes} bytes without completing an event`);
    this.parser.feed(this.decoder.write(bytes));
    if (this.events.length > 0) this.pending = 0;
    return this.take();
  }

  /** The end of the body: an event not yet closed by a blank line still counts. */
  end(): readonly string[] {
    // A line break ends a pending line, a blank line dispatches its event; when nothing is
    // pending, both are blank lines and dispatch nothing.
    this.parser.feed(`${this.decoder.end()}\n\n`);
    this.parser.reset();
    return this.take();
  }

  private take(): readonly string[] {
    if (this.events.length === 0) return NONE;
    const events = this.events;
    this.events = [];
    return events;
  }
}
