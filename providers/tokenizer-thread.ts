// Prompt counts off the event loop. Counting is free (POST /v1/messages/count_tokens) and a prompt
// of text that merges badly (random CJK, base64) takes the tokenizer up to half a second even
// under the cap of ./tokenizer.ts; on the event loop that is half a second of every other call of
// the process. Counts therefore run on one worker thread (./tokenizer-worker.ts), one after the
// other, started on the first count; the event loop only hands it each message's role, text and
// name. The encodings are loaded in the worker alone.
//
// A count the worker cannot give (it failed to start, exited, or the build has no worker script,
// as when tests run the TypeScript sources) is made on the calling thread, as before: a count is
// money (a cut stream's prompt), so it is never dropped.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChatMessage } from './port';
import { countChatPrompt, countedMessages, type TokenizerName } from './tokenizer';

/** A count asked of the worker. */
export interface CountRequest {
  id: number;
  tokenizer: TokenizerName;
  messages: ChatMessage[];
}

/** The worker's answer: the count, or why there is none. */
export interface CountAnswer {
  id: number;
  tokens?: number;
  error?: string;
}

const WORKER_SCRIPT = join(__dirname, 'tokenizer-worker.js');

interface Pending {
  resolve: (tokens: number) => void;
  reject: (error: Error) => void;
}

class TokenizerThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  count(tokenizer: TokenizerName, messages: ChatMessage[]): Promise<number> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Referenced while a count is pending, so the process waits for it; idle, it keeps nothing alive.
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, tokenizer, messages } satisfies CountRequest);
    });
  }

  async stop(): Promise<void> {
    await this.worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SCRIPT);
    worker.unref();
    worker.on('message', (answer: CountAnswer) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if (answer.tokens !== undefined) waiting.resolve(answer.tokens);
      else waiting.reject(new Error(answer.error ?? 'no count'));
    });
    const gone = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const { reject } of waiting) reject(error);
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`tokenizer worker exited (${code})`)));
    this.worker = worker;
    return worker;
  }
}

let thread: TokenizerThread | undefined;

/** Ends the worker thread (counts pending on it are then made on the calling thread); the next count starts another. */
export async function stopTokenizerThread(): Promise<void> {
  await thread?.stop();
}

/** Whether counts can run off the event loop (the build's worker script is there). */
export function countsOffThread(): boolean {
  return existsSync(WORKER_SCRIPT);
}

/**
 * countChatPrompt, on the worker thread where it can run: the same count, the event loop free
 * meanwhile. Where the worker cannot count, on this thread.
 */
export async function countChatPromptOffThread(tokenizer: TokenizerName, messages: readonly ChatMessage[]): Promise<number> {
  const counted = countedMessages(messages);
  if (thread === undefined) {
    if (!countsOffThread()) return countChatPrompt(tokenizer, counted);
    thread = new TokenizerThread();
  }
  try {
    return await thread.count(tokenizer, counted);
  } catch {
    return countChatPrompt(tokenizer, counted);
  }
}
