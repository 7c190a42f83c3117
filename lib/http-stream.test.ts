import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { sendStream } from './http-stream';

/** A server answering every request with `source()` through sendStream; records how sending ended. */
async function serve(source: () => Readable): Promise<{ server: Server; url: string; outcomes: Array<'done' | Error> }> {
  const outcomes: Array<'done' | Error> = [];
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain');
    sendStream(source(), res).then(() => outcomes.push('done'), (error: Error) => outcomes.push(error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, outcomes };
}

const settle = () => new Promise((r) => setTimeout(r, 100));

describe('sending a stream as an HTTP answer', () => {
  it('when the source fails midway, then the client sees a broken answer, never a complete one', async () => {
    const { server, url, outcomes } = await serve(() => Readable.from((async function* () {
      yield 'first line\n';
      await settle();
      throw new Error('store gone');
    })()));
    try {
      const response = await fetch(url);
      await expect(response.text()).rejects.toThrow();
      await settle();
      expect(outcomes).toEqual([expect.objectContaining({ message: 'store gone' })]);
    } finally {
      server.close();
    }
  });

  it('when the client goes away, then sending ends quietly and the source is no longer read', async () => {
    let produced = 0;
    const { server, url, outcomes } = await serve(() => Readable.from((async function* () {
      for (;;) {
        produced += 1;
        yield 'x'.repeat(64 * 1024);
      }
    })()));
    try {
      await new Promise<void>((resolve) => {
        const req = request(url, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.end();
      });
      await settle();
      expect(outcomes).toEqual(['done']);
      const after = produced;
      await settle();
      expect(produced).toBe(after);
    } finally {
      server.close();
    }
  });
});
