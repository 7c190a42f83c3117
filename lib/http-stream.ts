// Sends a stream as an HTTP answer body with backpressure. A client that goes away ends the
// sending quietly (the source is destroyed, so nothing more is read); a failing source cuts the
// answer, which the client sees as incomplete, never as a complete body.

import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export async function sendStream(source: Readable, destination: Writable): Promise<void> {
  try {
    await pipeline(source, destination);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' && destination.destroyed) return;
    throw error;
  }
}
