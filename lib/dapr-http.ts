// A small client for the Dapr sidecar's HTTP API (actor invocation, publish, state, service
// invocation): one keep-alive connection pool, JSON in and out, W3C trace context carried.

import { Pool, type Dispatcher } from 'undici';
import { GatewayError } from './errors';
import type { EventBatchMessage, EventEnvelope } from './events';
import { propagationHeaders } from './request-context';
import { batchSendAttributes, linkTo, SpanKind, tracedRoot } from './tracing';

export class DaprSidecar {
  private readonly pool: Pool;

  constructor(readonly host: string, readonly httpPort: number, connections = 64) {
    this.pool = new Pool(`http://${host}:${httpPort}`, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  /**
   * One call through the sidecar. `timeoutMs` bounds the whole call, answer body included: past
   * it the caller gets actor_unavailable (503) while daprd may still be retrying, so only calls
   * that are harmless to run late (idempotent by their request's id) should be bounded.
   */
  /** `options.contentType`: `body` is a string sent as is, with that type (else JSON). */
  async request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, given: Record<string, string> = {}, options: { timeoutMs?: number; contentType?: string } = {}): Promise<{ status: number; json: unknown }> {
    // The current request's trace and id go along: daprd continues the trace into the callee.
    const headers = { ...propagationHeaders(), ...given };
    const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    const failed = (error: unknown) => signal?.aborted
      ? new GatewayError('actor_unavailable', `no answer from the Dapr sidecar within ${options.timeoutMs} ms (${method} ${path.split('?')[0]})`)
      : new GatewayError('actor_unavailable', `Dapr sidecar unreachable: ${(error as Error).message}`);
    let response;
    let text: string;
    try {
      response = await this.pool.request({
        method,
        path,
        headers: body === undefined ? headers : { 'content-type': options.contentType ?? 'application/json', ...headers },
        body: body === undefined ? undefined : typeof body === 'string' && options.contentType ? body : JSON.stringify(body),
        signal,
      });
      text = await response.body.text();
    } catch (error) {
      throw failed(error);
    }
    let json: unknown = undefined;
    if (text.length > 0) {
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
    }
    return { status: response.statusCode, json };
  }

  /** A GET whose answer body is handed over as a stream, never buffered: the caller reads or destroys it. */
  async stream(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Dispatcher.ResponseData['body'] }> {
    try {
      const response = await this.pool.request({ method: 'GET', path, headers: { ...propagationHeaders(), ...headers } });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      throw new GatewayError('actor_unavailable', `Dapr sidecar unreachable: ${(error as Error).message}`);
    }
  }

  /**
   * Publishes a batch of one topic's events as one pub/sub message, `{ events: [...] }` (resolved
   * once pub/sub has taken it): one publish, one stream entry and one delivery for the lot. The
   * send is a producer span of its own trace (the batch serves many requests), linked to each
   * event's publish span, whose context the event carries in `traceparent`; daprd's spans of the
   * publish and of the delivery hang under it.
   */
  publishBatch(pubsub: string, topic: string, events: readonly EventEnvelope[]): Promise<void> {
    const links = events.flatMap((event) => linkTo(event.traceparent));
    return tracedRoot(`send ${topic}`, { kind: SpanKind.PRODUCER, links, attributes: batchSendAttributes(topic, events.length) }, async () => {
      // Opaque bytes to the sidecars: the CloudEvent carries them as data_base64, so neither sidecar
      // decodes and re-encodes every event (as they do a JSON body); the ledger decodes them.
      const message = JSON.stringify({ events } satisfies EventBatchMessage);
      const { status, json: answer } = await this.request('POST', `/v1.0/publish/${pubsub}/${encodeURIComponent(topic)}`, message, {}, { contentType: 'application/octet-stream' });
      if (status !== 204 && status !== 200) throw new Error(`publish to ${topic} failed with ${status}: ${JSON.stringify(answer)}`);
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
