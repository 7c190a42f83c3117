// The worker thread of ./tokenizer-thread.ts: counts prompts, one after the other, as asked.

import { parentPort } from 'node:worker_threads';
import { countChatPrompt } from './tokenizer';
import type { CountAnswer, CountRequest } from './tokenizer-thread';

parentPort?.on('message', ({ id, tokenizer, messages }: CountRequest) => {
  let answer: CountAnswer;
  try {
    answer = { id, tokens: countChatPrompt(tokenizer, messages) };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});
