// HTTP requests that fetch cannot send: a header repeated as separate lines (fetch joins the
// copies into one), for the credential-ambiguity cases.

import { request } from 'node:http';

export interface RawReply {
  status: number;
  body: any;
}

/** One request with `headers` sent line by line, in order, repeats included. */
export function rawRequest(url: string, method: string, headers: Array<[string, string]>, body?: Buffer | string): Promise<RawReply> {
  const target = new URL(url);
  const payload = body === undefined ? undefined : Buffer.from(body);
  const lines = [['host', target.host], ...headers, ...(payload ? [['content-length', String(payload.length)]] : [])].flat();
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, method, path: `${target.pathname}${target.search}`, headers: lines }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', reject);
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.once('error', reject);
    req.end(payload);
  });
}
