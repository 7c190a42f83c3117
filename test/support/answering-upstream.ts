// An upstream that answers every request with one fixed status and JSON body: how a provider
// failure looks from the wire (a refused key, a rejected parameter, an HTML error page).

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AnsweringUpstream {
  /** Its base URL, `/v1` as the OpenAI-style adapters expect. */
  url: string;
  close(): Promise<void>;
}

export async function answeringUpstream(status: number, body: unknown, headers: Record<string, string> = {}): Promise<AnsweringUpstream> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
