import { MAX_EVENT_BYTES, SseDataReader } from './sse';

function feed(parts: Array<string | Buffer>): string[] {
  const reader = new SseDataReader();
  const out: string[] = [];
  for (const part of parts) out.push(...reader.push(typeof part === 'string' ? Buffer.from(part) : part));
  out.push(...reader.end());
  return out;
}

describe('SseDataReader', () => {
  it('when one chunk holds several events, then each data payload comes out in order', () => {
    expect(feed(['data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n'])).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
  });

  it('when an event is split across chunks, even inside "data:", then it is joined', () => {
    expect(feed(['da', 'ta: {"a"', ':1}\n', '\ndata: x\n\n'])).toEqual(['{"a":1}', 'x']);
  });

  it('when a multi-byte character is split across chunks, then it is decoded whole', () => {
    const bytes = Buffer.from('data: é\n\n');
    expect(feed([bytes.subarray(0, 7), bytes.subarray(7)])).toEqual(['é']);
  });

  it('when lines end in CRLF, then the payload has no CR', () => {
    expect(feed(['data: x\r\n\r\ndata: y\r\n\r\n'])).toEqual(['x', 'y']);
  });

  it('when lines end in a bare CR (the spec allows it), then events are still read', () => {
    expect(feed(['data: x\r\r', 'data: y\r', '\r'])).toEqual(['x', 'y']);
  });

  it('when a CRLF is split across chunks, then it is one line end, not a blank line', () => {
    expect(feed(['data: a\r', '\ndata: b\r\n\r\n'])).toEqual(['a\nb']);
  });

  it('when comments and other fields appear, then only data is kept', () => {
    expect(feed([': keep-alive\n\nevent: message\nid: 3\nretry: 10\ndata: x\n\n'])).toEqual(['x']);
  });

  it('when an event has several data lines, then they are joined by newlines', () => {
    expect(feed(['data: a\ndata:b\n\n'])).toEqual(['a\nb']);
  });

  it('when the body ends without a blank line, then the last event still counts', () => {
    expect(feed(['data: x\n\ndata: [DONE]'])).toEqual(['x', '[DONE]']);
  });

  it('when nothing is pending, then end() yields nothing', () => {
    expect(feed(['data: x\n\n'])).toEqual(['x']);
  });
});

describe('SseDataReader bounds', () => {
  it('when a line never ends, then past the limit it is the upstream\'s protocol error', () => {
    const reader = new SseDataReader(1024);
    expect(reader.push(Buffer.from('data: {"a":"'))).toEqual([]);
    const line = Buffer.alloc(256, 'x');
    expect(() => {
      for (let i = 0; i < 8; i++) reader.push(line);
    }).toThrow(expect.objectContaining({ kind: 'protocol', message: expect.stringContaining('1024 bytes') }));
  });

  it('when events keep completing, then any number of bytes passes', () => {
    const reader = new SseDataReader(1024);
    const event = Buffer.from(`data: ${'x'.repeat(500)}\n\n`);
    let events = 0;
    for (let i = 0; i < 100; i++) events += reader.push(event).length;
    expect(events).toBe(100);
  });

  it('when no limit is given, then it is the documented 16 MiB', () => {
    expect(MAX_EVENT_BYTES).toBe(16 * 1024 * 1024);
  });
});
