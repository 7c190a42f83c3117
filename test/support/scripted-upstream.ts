// An upstream whose every answer a test writes itself, byte by byte if it likes: how a provider
// misbehaves mid-stream (usage where it is not expected, a cut after the last word, frames split
// anywhere). Each request is answered by the script set last; a request whose provider entry sends
// `x-script: <name>` by the script of that name, when one is set.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Script = (res: ServerResponse, body: Record<string, unknown>, req: IncomingMessage) => void;

export interface ScriptedUpstream {
  /** Its base URL, `/v1` as the OpenAI-style adapters expect. */
  url: string;
  /** Answers the next requests (those of entries sending `x-script: name`, when named). */
  answer(script: Script, name?: string): void;
  close(): Promise<void>;
}

export async function scriptedUpstream(): Promise<ScriptedUpstream> {
  let fallback: Script = (res) => res.writeHead(500).end();
  const named = new Map<string, Script>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const name = req.headers['x-script'];
      ((typeof name === 'string' ? named.get(name) : undefined) ?? fallback)(res, body, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    answer: (script, name) => (name === undefined ? (fallback = script) : named.set(name, script)),
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** An event-stream answer: `parts` written one by one (each its own write), then the end unless `end` is false. */
export function sse(res: ServerResponse, parts: readonly string[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let i = 0;
  const step = (): void => {
    if (res.destroyed) return;
    if (i === parts.length) return void (end ? res.end() : undefined);
    res.write(parts[i++], () => setImmediate(step));
  };
  step();
}

/** An event-stream answer of `parts`, then the connection broken, with no end. */
export function sseThenCut(res: ServerResponse, parts: readonly string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(parts.join(''), () => setTimeout(() => res.socket?.destroy(), 20));
}

/** One OpenAI chunk of the stream, as `data:` text. */
export function chunk(fields: Record<string, unknown>): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'up', ...fields })}\n\n`;
}

/** One OpenAI text delta (with its finish reason, when given). */
export function textChunk(content: string, finishReason: string | null = null): string {
  return chunk({ choices: [{ index: 0, delta: { content }, finish_reason: finishReason }] });
}
