// Incremental reader of Server-Sent Events that keeps only the `data:` payloads.
// Events may be split across network chunks, and one chunk may hold many events.
// Lines end in LF or CRLF (bare CR, allowed by the SSE spec, is not used by OpenAI-wire
// upstreams and is not supported). Comments, `event:`, `id:` and `retry:` are ignored.

import { StringDecoder } from 'node:string_decoder';

export class SseDataReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private data: string | undefined;

  /** Feeds bytes; returns the data of every event these bytes complete, in order. */
  push(bytes: Buffer): string[] {
    const text = this.pending === '' ? this.decoder.write(bytes) : this.pending + this.decoder.write(bytes);
    const events: string[] = [];
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) !== -1) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      this.line(text, start, end, events);
      start = nl + 1;
    }
    this.pending = start === 0 ? text : text.slice(start);
    return events;
  }

  /** The end of the body: an event not yet closed by a blank line still counts. */
  end(): string[] {
    const events: string[] = [];
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest !== '') this.line(rest, 0, rest.endsWith('\r') ? rest.length - 1 : rest.length, events);
    if (this.data !== undefined) events.push(this.data);
    this.data = undefined;
    return events;
  }

  private line(text: string, start: number, end: number, events: string[]): void {
    if (start === end) {
      if (this.data !== undefined) events.push(this.data);
      this.data = undefined;
      return;
    }
    if (!text.startsWith('data:', start)) return;
    let from = start + 5;
    if (text.charCodeAt(from) === 32) from++;
    const value = text.slice(from, end);
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }
}
