// What the benchmarks share: their command-line options (numbers as `--name value`, flags, and
// bench/ab.ts's `--variant`) and the chat they send (one short message, 16 output tokens, JSON or
// streamed).

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

/**
 * `bench/ab.ts`'s `--variant label=<dist>[,NAME=value…]`: a label, a build directory and the
 * environment its gateway runs with. A value may hold '=' (NODE_OPTIONS=--max-semi-space-size=32):
 * each name ends at its first '='.
 */
export function parseVariant(spec: string): { label: string; dist: string; env: Record<string, string> } {
  const [head, ...envs] = spec.split(',');
  const [label, dist] = head.split('=');
  if (!label || !dist) throw new Error(`--variant ${spec}: expected label=<dist directory>[,NAME=value…]`);
  const env: Record<string, string> = {};
  for (const pair of envs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--variant ${spec}: ${pair} is not NAME=value`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { label, dist, env };
}

export const CHAT_BODY = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
export const STREAM_BODY = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16, stream: true });
export const CHAT_PATH = '/api/open/v1/models/upstream-chat/chat';
