// Calls actors through the caller's own Dapr sidecar (the gateway's). Domain errors come back
// as values (ActorCallResult) and are rethrown here as the same GatewayError. With a call
// timeout, no call waits past it (placement gone, an actor that cannot be placed): the caller
// gets 503 actor_unavailable, and a call that runs later anyway is harmless, every actor method
// being idempotent by its request's id (a late reserve's hold expires: docs/money.md).

import { DaprSidecar } from '../../lib/dapr-http';
import { GatewayError } from '../../lib/errors';
import { SpanKind, tracedActorCall } from '../../lib/tracing';
import type { ActorCallResult, ActorInvoker } from './port';

export class DaprActorInvoker implements ActorInvoker {
  constructor(
    private readonly sidecar: DaprSidecar,
    private readonly options: { callTimeoutMs?: number } = {},
  ) {}

  invoke<R>(actorType: string, actorId: string, method: string, arg: unknown): Promise<R> {
    // A client span when traced: the sidecar call below carries it, daprd's spans hang under it.
    return tracedActorCall(SpanKind.CLIENT, actorType, actorId, method, async () => {
      const path = `/v1.0/actors/${actorType}/${encodeURIComponent(actorId)}/method/${method}`;
      const { status, json } = await this.sidecar.request('PUT', path, arg ?? {}, {}, { timeoutMs: this.options.callTimeoutMs });
      if (status !== 200) throw new GatewayError('actor_unavailable', `actor call ${actorType}.${method} failed with ${status}: ${JSON.stringify(json).slice(0, 300)}`);
      return unwrapActorResult<R>(json as ActorCallResult<R>);
    });
  }
}

export function unwrapActorResult<R>(outcome: ActorCallResult<R>): R {
  if (outcome && outcome.ok === true) return outcome.result;
  if (outcome && outcome.ok === false) {
    const { code, message, param, extra } = outcome.error;
    throw new GatewayError(GatewayError.isCode(code) ? code : 'internal_error', message, { param, extra });
  }
  throw new GatewayError('actor_unavailable', 'malformed actor response');
}
