// A stream's preamble: the pieces an upstream sends before anything the client would see (an
// OpenAI stream's opening chunk with the role and no text, or a chunk with no choice, as Azure's
// first with its prompt filter results; an Anthropic stream's message_start,
// ping, and the start of an empty text block). A stream is opened past it: a failure there (a cut
// connection, a piece that is not JSON, a usage count no call can have) is a failure before any
// output, so another upstream is tried or the call is answered with the error and its hold
// released, as when the upstream refuses at once (docs/providers.md, "Routing").

import type { StreamPiece } from './wires';

/** The most pieces read ahead: a preamble is two or three pieces; one that goes on is relayed as it comes. */
const MAX_PREAMBLE_PIECES = 8;

type Json = Record<string, unknown>;
const object = (value: unknown): Json | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined);

/** Whether a piece shows the client nothing yet: no text, no tool call, no thinking, no end, no usage. */
export function isPreamble(piece: StreamPiece): boolean {
  if (piece.outputDelta !== '') return false;
  const event = (piece as { event?: unknown }).event;
  if (typeof event === 'string') {
    const data = object((piece as { data?: unknown }).data);
    if (event === 'message_start' || event === 'ping') return true;
    const block = object(data?.content_block);
    return event === 'content_block_start' && block?.type === 'text' && block.text === '';
  }
  if (piece.usage !== undefined) return false;
  const choices = object((piece as { chunk?: unknown }).chunk)?.choices;
  // No choice at all (Azure's first chunk, its prompt filter results): nothing shown yet.
  if (Array.isArray(choices) && choices.length === 0) return true;
  if (!Array.isArray(choices) || choices.length !== 1) return false;
  const choice = object(choices[0]);
  if (!choice || (choice.finish_reason !== undefined && choice.finish_reason !== null)) return false;
  const delta = object(choice.delta) ?? {};
  return Object.entries(delta).every(([key, value]) => key === 'role' || !deltaValueCarries(value));
}

/**
 * Whether a field of an OpenAI delta (other than its role) carries output. OpenAI's own opening
 * chunk says `"refusal": null` beside its empty content, and some compatible servers send
 * `"tool_calls": []` on every delta: null, an empty text and an empty list carry nothing.
 */
export function deltaValueCarries(value: unknown): boolean {
  return value !== null && value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0);
}

/**
 * Reads an opened stream through its preamble, then gives every piece, the ones read first
 * included, in order. `answered` is called at the first piece (the upstream's first byte: the
 * attempt's timeout is over). A failure while reading the preamble is thrown here, after the
 * stream is let go.
 */
export async function pastPreamble<P extends StreamPiece>(pieces: AsyncIterable<P>, answered: () => void): Promise<AsyncIterable<P>> {
  const iterator = pieces[Symbol.asyncIterator]();
  const read: P[] = [];
  let done = false;
  try {
    while (read.length < MAX_PREAMBLE_PIECES) {
      const next = await iterator.next();
      answered();
      if (next.done) {
        done = true;
        break;
      }
      read.push(next.value);
      if (!isPreamble(next.value)) break;
    }
  } catch (error) {
    await iterator.return?.().catch(() => undefined);
    throw error;
  }
  return replay(read, iterator, done);
}

async function* replay<P>(read: P[], iterator: AsyncIterator<P>, done: boolean): AsyncGenerator<P> {
  let finished = done;
  try {
    yield* read;
    while (!finished) {
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Let go of the upstream when the reader stops early (a client gone, an error).
    if (!finished) await iterator.return?.();
  }
}
