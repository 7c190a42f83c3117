// Issue 6's traces, against a whole deployment exporting to a small OTLP receiver: one chat and
// one image request, each a single trace whose spans all hang from the gateway's server span —
// actor calls with their type, id and method, the provider call with its GenAI attributes, the
// publish of each event and the ledger's consume span linked to it, and on the Dapr topology
// the actors app's and the sidecars' own spans between them. No span is left without its parent.

import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { chat, fundedAccount, hello, image, picture } from '../support/api';
import { eventually } from '../support/eventually';
import type { Upstream } from '../support/upstream';
import { OTLP_SPAN_KIND as KIND, orphans, spanTree, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';

export interface TracedDeployment {
  url: string;
  /** The local upstream the catalog's upstream-* models are served by. */
  upstream: Upstream;
  receiver: OtlpReceiver;
  /** The service names of the apps' own spans: gateway, and on Dapr the actors and ledger apps. */
  services: { gateway: string; actors: string; ledger: string };
  /** Dapr only: the spans the sidecars themselves exported (told apart from the apps' by scope). */
  sidecarSpans?: (spans: ReceivedSpan[]) => ReceivedSpan[];
  close(): Promise<void>;
}

/** The environment that makes the apps export their spans to `receiver`, flushed quickly. */
export function tracingEnv(receiver: OtlpReceiver): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
}

/** The trace id and span id the gateway answered in `traceparent`. */
export const traceIdOf = (response: { headers: Headers }) => {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(response.headers.get('traceparent') ?? '');
  if (!match) throw new Error(`no traceparent in the answer: ${response.headers.get('traceparent')}`);
  return { traceId: match[1], spanId: match[2] };
};

export function tracingSuite(name: string, start: () => Promise<TracedDeployment>): void {
  describe(`traces of one request (${name})`, () => {
    let d: TracedDeployment;
    beforeAll(async () => {
      d = await start();
    });
    afterAll(() => d?.close());

    const byId = (spans: ReceivedSpan[]) => new Map(spans.map((s) => [s.spanId, s]));
    /** The spans between `span` and the root, nearest first. */
    const ancestors = (spans: ReceivedSpan[], span: ReceivedSpan) => {
      const index = byId(spans);
      const chain: ReceivedSpan[] = [];
      for (let parent = span.parentSpanId && index.get(span.parentSpanId); parent; parent = parent.parentSpanId && index.get(parent.parentSpanId)) chain.push(parent);
      return chain;
    };
    const appSpans = (spans: ReceivedSpan[], service: string) => spans.filter((s) => s.service === service && !d.sidecarSpans?.([s]).length);

    /** Waits until the trace has what `complete` asks, then checks the invariants every trace keeps. */
    async function traceOf(traceId: string, complete: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
      // Exporters send in batches (daprd's every few seconds): wait until the tree has closed.
      const inTrace = (all: ReceivedSpan[]) => all.filter((s) => s.traceId === traceId);
      await d.receiver.waitFor((all) => complete(inTrace(all)) && orphans(inTrace(all)).length === 0, 20_000).catch(() => undefined);
      const spans = inTrace(d.receiver.spans());
      const tree = spanTree(spans);
      // The README's picture of a trace is this tree from a real run (TRACE_TREE_OUT=file).
      if (process.env.TRACE_TREE_OUT) appendFileSync(process.env.TRACE_TREE_OUT, `${tree}\n\n`);
      // One root, the gateway's server span; every other span's parent is in the trace.
      expect([orphans(spans).map((s) => `${s.service} ${s.name}`), tree]).toEqual([[], tree]);
      const roots = spans.filter((s) => !s.parentSpanId);
      expect(roots.map((s) => [s.service, s.kind])).toEqual([[d.services.gateway, KIND.server]]);
      return spans;
    }

    const has = (spans: ReceivedSpan[], service: string, name: string, kind?: number) =>
      spans.some((s) => s.service === service && s.name === name && (kind === undefined || s.kind === kind));

    it('when a chat is billed, then one trace holds the server span, the actor calls, the provider call, the publishes and the linked consumes', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      d.receiver.clear();
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 5 }, { model: 'upstream-chat' });
      expect(answer.status).toBe(200);
      const { traceId, spanId } = traceIdOf(answer);
      const { gateway, actors, ledger } = d.services;
      const spans = await traceOf(traceId, (s) =>
        has(s, gateway, 'FundsHold/settle') && has(s, ledger, 'process usage') && has(s, gateway, 'POST /api/open/v1/models/:id/chat'));

      // The gateway's server span is the one the client was told of.
      const server = spans.find((s) => !s.parentSpanId)!;
      expect(server).toMatchObject({ spanId, name: 'POST /api/open/v1/models/:id/chat', kind: KIND.server });
      expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200, 'http.route': '/api/open/v1/models/:id/chat' });

      // Actor calls made by the gateway: reserve then settle, with type, id and method.
      const calls = appSpans(spans, gateway).filter((s) => s.attributes['dapr.actor.type'] === 'FundsHold');
      expect(calls.map((s) => s.attributes['dapr.actor.method']).sort()).toEqual(['reserve', 'settle']);
      for (const call of calls) {
        expect(call.parentSpanId).toBe(server.spanId);
        expect(call.attributes['dapr.actor.id']).toMatch(/:pool-3$/);
        expect(call.name).toBe(`FundsHold/${call.attributes['dapr.actor.method']}`);
      }

      // The provider call: GenAI attributes, tokens as billed.
      const model = appSpans(spans, gateway).find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!;
      expect(model).toMatchObject({ name: 'chat up-model', kind: KIND.client, parentSpanId: server.spanId });
      expect(model.attributes).toMatchObject({
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'up-model',
        'gen_ai.usage.input_tokens': answer.body.usage.prompt_tokens,
        'gen_ai.usage.output_tokens': answer.body.usage.completion_tokens,
      });
      // The provider was asked under that span: an upstream that traces continues the trace.
      expect(d.upstream.lastHeaders?.traceparent).toBe(`00-${traceId}-${model.spanId}-01`);

      // The settle's one event (its usage, carrying its charge): a producer span under the settle
      // call, a consumer span linked to it. No billing event of its own.
      expect(spans.filter((s) => s.name === 'publish billing')).toEqual([]);
      const topic = 'usage';
      const publish = spans.find((s) => s.name === `publish ${topic}` && s.kind === KIND.producer)!;
      const consume = spans.find((s) => s.name === `process ${topic}` && s.kind === KIND.consumer)!;
      expect(publish.service).toBe(actors);
      expect(consume.service).toBe(ledger);
      expect(ancestors(spans, publish).map((s) => s.spanId)).toContain(calls.find((c) => c.attributes['dapr.actor.method'] === 'settle')!.spanId);
      expect(consume.attributes).toMatchObject({ 'messaging.destination.name': topic, 'messaging.message.id': publish.attributes['messaging.message.id'] });
      expect(ancestors(spans, consume).map((s) => s.spanId)).toContain(publish.spanId);
      if (!d.sidecarSpans) {
        expect(consume.links).toEqual([{ traceId, spanId: publish.spanId }]);
      } else {
        // On Dapr events travel in batches: the consume sits under its publish, in this trace, and
        // links to the ledger's delivery, whose own trace starts at the batch's send (linked to
        // the publish) and holds daprd's spans of the publish and the delivery.
        expect(consume.parentSpanId).toBe(publish.spanId);
        expect(consume.links).toHaveLength(1);
        const [delivery] = consume.links;
        expect(delivery.traceId).not.toBe(traceId);
        const batchTrace = (all: ReceivedSpan[]) => all.filter((x) => x.traceId === delivery.traceId);
        // daprd exports its spans every few seconds: wait until the delivery's trace is whole.
        await d.receiver.waitFor((all) => batchTrace(all).some((x) => x.spanId === delivery.spanId) && batchTrace(all).some((x) => x.name === `send ${topic}`) && orphans(batchTrace(all)).length === 0, 20_000).catch(() => undefined);
        const batch = batchTrace(d.receiver.spans());
        if (process.env.TRACE_TREE_OUT) appendFileSync(process.env.TRACE_TREE_OUT, `${spanTree(batch)}\n\n`);
        const served = batch.find((x) => x.spanId === delivery.spanId)!;
        expect(served).toMatchObject({ service: ledger, name: 'POST /events/:topic', kind: KIND.server });
        expect(served.attributes).toMatchObject({ 'http.route': '/events/:topic', 'url.path': `/events/${topic}` });
        const send = batch.find((x) => x.name === `send ${topic}`)!;
        expect(send).toMatchObject({ service: actors, kind: KIND.producer });
        expect(send.parentSpanId).toBeFalsy();
        expect(send.links).toContainEqual({ traceId, spanId: publish.spanId });
        expect(send.attributes).toMatchObject({ 'messaging.destination.name': topic, 'messaging.operation.type': 'send' });
        expect(send.attributes['messaging.batch.message_count']).toBeGreaterThanOrEqual(1);
        const hops = ancestors(batch, served);
        expect(hops.map((x) => x.spanId)).toContain(send.spanId);
        expect(d.sidecarSpans(hops.slice(0, hops.findIndex((x) => x.spanId === send.spanId))).length).toBeGreaterThan(0);
      }

      if (d.sidecarSpans) {
        // The actors app served each call under daprd's spans, which hang under the gateway's call.
        for (const call of calls) {
          const served = appSpans(spans, actors).find((s) => s.kind === KIND.server && s.attributes['dapr.actor.method'] === call.attributes['dapr.actor.method'])!;
          expect(served).toBeDefined();
          expect(served.name).toBe(call.name);
          const between = ancestors(spans, served);
          expect(between.map((s) => s.spanId)).toContain(call.spanId);
          const hops = between.slice(0, between.findIndex((s) => s.spanId === call.spanId));
          expect(hops.length).toBeGreaterThan(0);
          expect(d.sidecarSpans(hops)).toEqual(hops);
        }
        expect(d.sidecarSpans(spans).length).toBeGreaterThan(0);
      }
    });

    it('when a client sends a tracestate, then it is passed on unchanged: on the provider request, on every span of the request\'s trace, actor calls and events included', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      d.receiver.clear();
      const callerTrace = randomUUID().replace(/-/g, '');
      const tracestate = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 5 }, { model: 'upstream-chat', headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`, tracestate: ' rojo=00f067aa0ba902b7 ,, congo=t61rcWkgMzE' } });
      expect(answer.status).toBe(200);
      const { traceId } = traceIdOf(answer);
      expect(traceId).toBe(callerTrace);
      const { gateway, actors, ledger } = d.services;
      expect(d.upstream.lastHeaders?.tracestate).toBe(tracestate);
      const inTrace = (all: ReceivedSpan[]) => all.filter((s) => s.traceId === traceId);
      // The caller's span is not ours: its trace has no root here, only spans under the caller's.
      const complete = (list: ReceivedSpan[]) => has(list, ledger, 'process usage') && has(list, gateway, 'FundsHold/settle') && has(list, gateway, 'POST /api/open/v1/models/:id/chat') && (!d.sidecarSpans || has(list, actors, 'FundsHold/settle', KIND.server));
      const spans = inTrace(await d.receiver.waitFor((all) => complete(inTrace(all)), 20_000));
      const ours = spans.filter((s) => !d.sidecarSpans?.([s]).length);
      const names = (list: ReceivedSpan[]) => list.map((s) => `${s.service} ${s.name}`).sort();
      expect(names(ours.filter((s) => s.traceState === tracestate))).toEqual(names(ours));
      expect(names(ours)).toEqual(expect.arrayContaining([`${gateway} POST /api/open/v1/models/:id/chat`, `${gateway} chat up-model`, `${gateway} FundsHold/settle`, `${actors} publish usage`, `${ledger} process usage`]));
      // On Dapr the actors app's span has it only if both daprd hand it on (their hop between them included).
      if (d.sidecarSpans) expect(names(ours)).toContain(`${actors} FundsHold/settle`);
    });

    it('when a chat falls back to a second upstream, then its trace holds one provider span per attempt, each naming its upstream and outcome', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      d.receiver.clear();
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 3 }, { model: 'routed-chat' });
      expect(answer.status).toBe(200);
      const { traceId } = traceIdOf(answer);
      const { gateway, ledger } = d.services;
      const spans = await traceOf(traceId, (s) => has(s, ledger, 'process usage') && s.filter((x) => x.attributes['gen_ai.operation.name'] === 'chat').length === 2);
      const server = spans.find((s) => !s.parentSpanId)!;
      const attempts = appSpans(spans, gateway).filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').sort((a, b) => Number(a.startNs - b.startNs));
      expect(attempts.map((s) => [s.name, s.attributes['payg.provider'], s.attributes['payg.attempt.outcome'], s.parentSpanId])).toEqual([
        ['chat up-model-a', 'local-openai-503', 'unavailable', server.spanId],
        ['chat up-model', 'local-openai', 'served', server.spanId],
      ]);
      expect(attempts[0].status.code).toBe(2);
      expect(attempts[1].attributes['gen_ai.usage.output_tokens']).toBe(3);
    });

    it('when a stream is cut after output, then its provider span is an error whose outcome is broken, under the 200 the client saw', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      d.receiver.clear();
      const answer = await chat(d.url, apiKey, { ...hello, stream: true }, { model: 'upstream-cut-chat' });
      expect(answer.status).toBe(200);
      const { traceId, spanId } = traceIdOf(answer);
      const { gateway, ledger } = d.services;
      const spans = await traceOf(traceId, (s) => has(s, ledger, 'process usage') && has(s, gateway, 'chat up-model') && has(s, gateway, 'POST /api/open/v1/models/:id/chat'));
      const model = appSpans(spans, gateway).find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!;
      expect([model.parentSpanId, model.attributes['payg.provider'], model.attributes['payg.attempt.outcome'], model.status.code]).toEqual([spanId, 'local-openai-cut', 'broken', 2]);
      expect(spans.find((s) => s.spanId === spanId)?.attributes['http.response.status_code']).toBe(200);
    });

    /**
     * A chat of `model` under a traceparent of the test's own, whose client leaves once `leave`
     * resolves; the gateway's server span and its provider span, once both have arrived.
     */
    async function leftChat(model: string, directive: string, stream: boolean, leave: (sent: Promise<Response>) => Promise<void>) {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const traceId = randomUUID().replace(/-/g, '');
      const controller = new AbortController();
      const sent = fetch(`${d.url}/api/open/v1/models/${model}/chat`, {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(directive ? { 'x-sim-directive': directive } : {}), traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        body: JSON.stringify({ ...hello, stream, max_tokens: 200 }),
      });
      await leave(sent);
      controller.abort();
      await sent.catch(() => undefined);
      const { gateway } = d.services;
      const ended = (all: ReceivedSpan[]) => all.filter((s) => s.traceId === traceId && s.service === gateway);
      const spans = ended(await d.receiver.waitFor((all) => ended(all).some((s) => s.kind === KIND.server) && ended(all).some((s) => s.attributes['gen_ai.operation.name'] === 'chat'), 20_000));
      return { server: spans.find((s) => s.kind === KIND.server)!, model: spans.find((s) => s.attributes['gen_ai.operation.name'] === 'chat')! };
    }

    it('when the client leaves while the provider is still answering, then the provider span is cancelled by the gateway, not in error, and the server span says the client closed (499)', async () => {
      const before = d.upstream.requests;
      // Left once the upstream (which never answers) has the call.
      const { server, model } = await leftChat('hanging-upstream-chat', '', false, async () => void (await eventually(async () => d.upstream.requests, (n) => n > before)));
      expect([model.status.code, model.attributes['payg.cancelled'], model.attributes['payg.attempt.outcome']]).toEqual([0, 'client_disconnected', 'aborted']);
      expect(model.parentSpanId).toBe(server.spanId);
      expect([server.status.code, server.attributes['http.response.status_code'], server.attributes['payg.client_closed']]).toEqual([0, 499, true]);
    });

    it('when the client leaves a stream midway, then the provider span is cancelled by the gateway with the tokens produced, not in error, and the server span says the client closed after its 200', async () => {
      const { server, model } = await leftChat('sim-chat', 'tokens=200; stream-delay=20', true, async (sent) => {
        const reader = (await sent).body!.getReader();
        let received = '';
        while ((received.match(/tok/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
      });
      expect([model.status.code, model.attributes['payg.cancelled']]).toEqual([0, 'client_disconnected']);
      expect(model.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(model.attributes['gen_ai.usage.output_tokens']).toBeLessThan(200);
      expect([server.status.code, server.attributes['http.response.status_code'], server.attributes['payg.client_closed']]).toEqual([0, 200, true]);
    });

    it('when an image is generated, then its trace holds the ImageTask calls, FundsHold under them, the provider call and the linked consume', async () => {
      const { apiKey } = await fundedAccount(d.url, 100_000_000);
      d.receiver.clear();
      const answer = await image(d.url, apiKey, picture, { model: 'upstream-image', key: randomUUID() });
      expect(answer.status).toBe(200);
      const { traceId } = traceIdOf(answer);
      const { gateway, ledger } = d.services;
      const spans = await traceOf(traceId, (s) => has(s, ledger, 'process usage') && has(s, gateway, 'POST /api/open/v1/models/:id/images/generations') && s.some((x) => x.attributes['dapr.actor.type'] === 'FundsHold'));
      const model = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'generate_content')!;
      expect(model).toMatchObject({ service: gateway, kind: KIND.client });
      expect(model.attributes).toMatchObject({ 'gen_ai.request.model': 'up-image', 'gen_ai.output.type': 'image' });
      expect(d.upstream.lastImageHeaders?.traceparent).toBe(`00-${traceId}-${model.spanId}-01`);
      const taskCalls = appSpans(spans, gateway).filter((s) => s.attributes['dapr.actor.type'] === 'ImageTask');
      expect(taskCalls.length).toBeGreaterThan(0);
      // FundsHold is called by the ImageTask actor, so its span is under an ImageTask call.
      const holds = spans.filter((s) => s.attributes['dapr.actor.type'] === 'FundsHold' && s.kind !== KIND.server);
      expect(holds.length).toBeGreaterThan(0);
      for (const hold of holds) expect(ancestors(spans, hold).some((s) => s.attributes['dapr.actor.type'] === 'ImageTask')).toBe(true);
    });
  });
}
