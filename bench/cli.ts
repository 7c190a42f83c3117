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
  const [label, dist] = splitAtFirst(head);
  if (!label || !dist) throw new Error(`--variant ${spec}: expected label=<dist directory>[,NAME=value…]`);
  const env: Record<string, string> = {};
  for (const pair of envs) {
    const [name, value] = splitAtFirst(pair);
    if (!name || value === undefined) throw new Error(`--variant ${spec}: ${pair} is not NAME=value`);
    env[name] = value;
  }
  return { label, dist, env };
}

/** `name=value` split at its first '=' (the value keeps any other); no '=': the name alone. */
function splitAtFirst(text: string): [string, string | undefined] {
  const at = text.indexOf('=');
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

export const CHAT_BODY = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
export const STREAM_BODY = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16, stream: true });
export const CHAT_PATH = '/api/open/v1/models/upstream-chat/chat';
