// A small client for the Dapr sidecar's HTTP API (actor invocation, publish, state, service
// invocation): one keep-alive connection pool, JSON in and out, W3C trace context carried.

import { Pool, type Dispatcher } from 'undici';
import { GatewayError } from './errors';
import type { EventEnvelope } from './events';
import { currentContext, propagationHeaders, traceparentOf } from './request-context';
import { messagingAttributes, SpanKind, traced } from './tracing';

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
  async request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, given: Record<string, string> = {}, options: { timeoutMs?: number } = {}): Promise<{ status: number; json: unknown }> {
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
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
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
   * Publishes one event (resolved once pub/sub has taken it), in a producer span when traced. The
   * envelope names the publish in `traceparent`, so the consumer can link its span to it even
   * though daprd's delivery arrives under daprd's own span.
   */
  publish(pubsub: string, event: EventEnvelope): Promise<void> {
    return traced(`publish ${event.topic}`, { kind: SpanKind.PRODUCER, attributes: messagingAttributes('publish', event.topic, event.id) }, async () => {
      const context = currentContext();
      const sent = context ? { ...event, traceparent: traceparentOf(context) } : event;
      const { status, json } = await this.request('POST', `/v1.0/publish/${pubsub}/${encodeURIComponent(event.topic)}`, sent);
      if (status !== 204 && status !== 200) throw new Error(`publish to ${event.topic} failed with ${status}: ${JSON.stringify(json)}`);
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
