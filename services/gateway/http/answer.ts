// What a use case answers, free of HTTP: a whole JSON body, or a stream of frames the route writes
// as they come. Routes turn it into a response (./respond.ts); tests read it directly.

export interface JsonAnswer {
  kind: 'json';
  status?: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface StreamFrame {
  text: string;
  /** Called once the frame has been handed to the socket: a piece of output the client was sent. */
  sent?: () => void;
}

export interface StreamAnswer {
  kind: 'stream';
  headers: Record<string, string>;
  /** Read to the end by whoever answers, client gone or not: the end settles the call's money. */
  frames: AsyncIterable<StreamFrame>;
  /** Open for as long as the client listens (session events): no idle timeout on the connection. */
  longLived?: boolean;
  /**
   * A stream whose client takes nothing of what was written for this long, while it waits for
   * the client (a long-lived one at once, another once the client is STREAM_BUFFER_BYTES behind),
   * is ended (respond.ts: STALLED_STREAM_MS when not given).
   */
  stallMs?: number;
  /**
   * A model call's signal: once it is aborted (the call's deadline, the drain, the client gone)
   * the stream waits for its client no longer, so that its end and its charge are not held back.
   */
  callSignal?: AbortSignal;
}

export type UseCaseAnswer = JsonAnswer | StreamAnswer;
