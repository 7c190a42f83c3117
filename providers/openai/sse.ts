// Incremental reader of Server-Sent Events that keeps only the `data:` payloads, over
// eventsource-parser (the spec's line and field grammar: LF, CRLF or CR line ends, events
// split across chunks or many in one chunk, comments, `event:`, `id:` and `retry:` fields).
// What this adds: bytes in (a multi-byte character may be split across chunks), the data
// payloads of the events each chunk completes out, and the end of the body closing an event
// that no blank line closed (the spec would drop it; an upstream that ends its body right
// after `data: [DONE]` still finished).

import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';

const NONE: readonly string[] = Object.freeze([]);

export class SseDataReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  /** Data of the events the chunk being fed completes; handed out and replaced per push. */
  private events: string[] = [];

  constructor() {
    this.parser = createParser({ onEvent: (event) => this.events.push(event.data) });
  }

  /** Feeds bytes; returns the data of every event these bytes complete, in order. */
  push(bytes: Buffer): readonly string[] {
    this.parser.feed(this.decoder.write(bytes));
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
