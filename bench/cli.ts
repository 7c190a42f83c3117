// What the benchmarks share: their numeric command-line options (`--name value`) and the chat
// they send (one short message, 16 output tokens, JSON or streamed).

/** The command line after the script. */
export const args = process.argv.slice(2);

/** The number after `--name`, else `fallback`. */
export function option(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

/** Whether `--name` was given. */
export function flag(name: string): boolean {
  return args.includes(`--${name}`);
}

export const CHAT_BODY = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
export const STREAM_BODY = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16, stream: true });
export const CHAT_PATH = '/api/open/v1/models/upstream-chat/chat';
