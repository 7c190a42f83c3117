import { EventEmitter, once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { eventually } from '../test/support/eventually';
import { SpanKind } from '@opentelemetry/api';
import { tracing as sdkTrace } from '@opentelemetry/sdk-node';
import { currentContext, propagationHeaders, runWithContext, traceparentOf } from './request-context';
import { deliverInProcess, endModelCall, incomingContext, requestContext, startModelCall, startTracing, stopTracing, traced, tracedFrom, tracingEnabled } from './tracing';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('untraced', () => {
  it('when no collector is named, then no span is made and the request still has its ids', async () => {
    expect(startTracing('test', { env: {} })).toBe(false);
    expect(tracingEnabled()).toBe(false);
    const context = incomingContext({ traceparent: `00-${TRACE}-${PARENT}-01` }, 'GET', { kind: SpanKind.SERVER });
    expect(context).toMatchObject({ traceId: TRACE, flags: '01' });
    expect(context.span).toBeUndefined();
    expect(await traced('x', { kind: SpanKind.INTERNAL }, async () => currentContext())).toBeUndefined();
    expect(startModelCall('chat', 'openai', 'm', 'p')).toBeUndefined();
  });
});

describe('traced', () => {
  const exporter = new sdkTrace.InMemorySpanExporter();
  beforeAll(() => {
    expect(startTracing('unit', { exporter })).toBe(true);
  });
  afterAll(() => stopTracing());
  beforeEach(() => exporter.reset());
  const spans = () => exporter.getFinishedSpans();
  const parentOf = (span: sdkTrace.ReadableSpan) => span.parentSpanContext?.spanId;

  it('when a request arrives with a traceparent, then its server span continues that trace and children hang under it', async () => {
    const context = incomingContext({ traceparent: `00-${TRACE}-${PARENT}-01` }, 'POST', { kind: SpanKind.SERVER }, 'req-1');
    expect(context.traceId).toBe(TRACE);
    expect(context.spanId).not.toBe(PARENT);
    const inner = await runWithContext(context, () =>
      traced('FundsHold/reserve', { kind: SpanKind.CLIENT, attributes: { 'dapr.actor.type': 'FundsHold' } }, async () => ({ context: currentContext(), headers: propagationHeaders() })));
    context.span!.end();
    const [child, server] = spans();
    expect(server.name).toBe('POST');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(server)).toBe(PARENT);
    expect(child.name).toBe('FundsHold/reserve');
    expect(child.spanContext().traceId).toBe(TRACE);
    expect(parentOf(child)).toBe(server.spanContext().spanId);
    expect(child.attributes['dapr.actor.type']).toBe('FundsHold');
    // What goes to the sidecar during the call names the call's own span.
    expect(inner.context?.spanId).toBe(child.spanContext().spanId);
    expect(inner.headers.traceparent).toBe(`00-${TRACE}-${child.spanContext().spanId}-01`);
    expect(inner.headers['x-request-id']).toBe('req-1');
  });

  it('when a request arrives with a tracestate, then its spans carry it and every call under them sends it on unchanged', async () => {
    const context = incomingContext({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' }, 'POST', { kind: SpanKind.SERVER }, 'req-state');
    const inner = await runWithContext(context, () => traced('FundsHold/reserve', { kind: SpanKind.CLIENT }, async () => propagationHeaders()));
    context.span!.end();
    const [child, server] = spans();
    expect([server, child].map((span) => span.spanContext().traceState?.serialize())).toEqual(['rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE']);
    expect(inner).toEqual({ traceparent: `00-${TRACE}-${child.spanContext().spanId}-01`, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', 'x-request-id': 'req-state' });
  });

  it('when a request arrives with a malformed tracestate, then it is traced as without one', async () => {
    const context = incomingContext({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'rojo=1,Bad Key=2' }, 'POST', { kind: SpanKind.SERVER }, 'req-bad-state');
    const inner = await runWithContext(context, () => traced('FundsHold/reserve', { kind: SpanKind.CLIENT }, async () => propagationHeaders()));
    context.span!.end();
    expect(spans().map((span) => [span.parentSpanContext?.traceId, span.spanContext().traceState])).toEqual([[TRACE, undefined], [TRACE, undefined]]);
    expect(inner).not.toHaveProperty('tracestate');
  });

  it('when an event carries a traceparent and a tracestate, then its consumption joins that trace with that tracestate', async () => {
    const seen = await tracedFrom({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'rojo=1' }, 'process usage', { kind: SpanKind.CONSUMER }, async () => propagationHeaders());
    const [consume] = spans();
    expect(consume.parentSpanContext?.spanId).toBe(PARENT);
    expect(consume.spanContext().traceState?.serialize()).toBe('rojo=1');
    expect(seen.tracestate).toBe('rojo=1');
  });

  it('when a request arrives with an unsampled traceparent, then it is sampled all the same: its span is recorded under the caller\'s, and what goes on says sampled', async () => {
    const context = incomingContext({ traceparent: `00-${TRACE}-${PARENT}-00` }, 'POST', { kind: SpanKind.SERVER }, 'req-unsampled');
    expect(context.span!.isRecording()).toBe(true);
    const headers = await runWithContext(context, () => traced('FundsHold/reserve', { kind: SpanKind.CLIENT }, async () => propagationHeaders()));
    context.span!.end();
    const [child, server] = spans();
    expect(server.spanContext()).toMatchObject({ traceId: TRACE, traceFlags: 1 });
    expect(parentOf(server)).toBe(PARENT);
    expect(traceparentOf(context)).toBe(`00-${TRACE}-${server.spanContext().spanId}-01`);
    expect(headers.traceparent).toBe(`00-${TRACE}-${child.spanContext().spanId}-01`);
  });

  it('when a request arrives without a traceparent, then a new trace starts with a root span', () => {
    const context = incomingContext({}, 'GET', { kind: SpanKind.SERVER });
    context.span!.end();
    expect(parentOf(spans()[0])).toBeUndefined();
    expect(spans()[0].spanContext().traceId).toBe(context.traceId);
  });

  it('when the traced work fails, then its span ends with an error status and the error goes on', async () => {
    await expect(traced('x', { kind: SpanKind.INTERNAL }, async () => {
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(spans()[0].status).toMatchObject({ code: 2, message: 'boom' });
  });

  it('when a model call ends, then it carries the GenAI attributes and the token counts', () => {
    const context = incomingContext({}, 'POST', { kind: SpanKind.SERVER });
    runWithContext(context, () => endModelCall(startModelCall('chat', 'openai', 'gpt-x', 'local'), { inputTokens: 12, outputTokens: 7 }));
    const [call] = spans();
    expect(call.name).toBe('chat gpt-x');
    expect(call.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(call)).toBe(context.spanId);
    expect(call.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-x', 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 7 });
  });

  it('when an event is delivered in process, then the consume span sits under the publish span and links to it', () => {
    const context = incomingContext({}, 'POST', { kind: SpanKind.SERVER });
    let consumedIn: string | undefined;
    runWithContext(context, () => deliverInProcess({ topic: 'billing', id: 'e1' }, () => {
      consumedIn = currentContext()?.spanId;
    }));
    const [consume, publish] = spans();
    expect(publish).toMatchObject({ name: 'publish billing', kind: SpanKind.PRODUCER });
    expect(consume).toMatchObject({ name: 'process billing', kind: SpanKind.CONSUMER });
    expect(parentOf(publish)).toBe(context.spanId);
    expect(parentOf(consume)).toBe(publish.spanContext().spanId);
    expect(consume.links.map((l) => l.context.spanId)).toEqual([publish.spanContext().spanId]);
    expect(consume.attributes['messaging.message.id']).toBe('e1');
    expect(consumedIn).toBe(consume.spanContext().spanId);
  });

  it('when the Dapr-side middleware serves an actor call, then its server span names the actor and is the context of the rest', () => {
    const req = Object.assign(new EventEmitter(), { method: 'PUT', url: '/actors/FundsHold/acct%3Apool-3/method/reserve', headers: { traceparent: `00-${TRACE}-${PARENT}-01`, 'x-request-id': 'from-gateway' } });
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    let seen: ReturnType<typeof currentContext>;
    requestContext()(req, res, () => {
      seen = currentContext();
    });
    expect(seen!).toMatchObject({ traceId: TRACE, requestId: 'from-gateway' });
    res.emit('finish');
    const [server] = spans();
    expect(server.name).toBe('FundsHold/reserve');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(server)).toBe(PARENT);
    expect(server.attributes).toMatchObject({ 'dapr.actor.type': 'FundsHold', 'dapr.actor.id': 'acct:pool-3', 'dapr.actor.method': 'reserve', 'http.response.status_code': 200 });
    expect(seen!.spanId).toBe(server.spanContext().spanId);
    expect(traceparentOf(seen!)).toBe(`00-${TRACE}-${server.spanContext().spanId}-01`);
  });

  it('when daprd delivers an actor call with a tracestate, then the actors app\'s span carries it and its own sidecar calls send it on', () => {
    const req = Object.assign(new EventEmitter(), { method: 'PUT', url: '/actors/FundsHold/acct%3Apool-3/method/settle', headers: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'rojo=00f067aa0ba902b7', 'x-request-id': 'from-gateway' } });
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    let sent: Record<string, string> = {};
    requestContext()(req, res, () => {
      sent = propagationHeaders();
    });
    res.emit('finish');
    const [server] = spans();
    expect(server.spanContext().traceState?.serialize()).toBe('rojo=00f067aa0ba902b7');
    expect(sent.tracestate).toBe('rojo=00f067aa0ba902b7');
  });

  it('when the ledger app serves a read, then its server span is named by the route, never the path with its ids', async () => {
    const app = express();
    app.use(requestContext());
    app.get('/accounts/:accountId/pools/:pool', (_req, res) => void res.json({}));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      expect((await fetch(`http://127.0.0.1:${port}/accounts/acct_0123456789/pools/pool-3`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/no/route/acct_0123456789`)).status).toBe(404);
    } finally {
      server.close();
    }
    await eventually(async () => spans().length, (n) => n === 2);
    const [read, unknown] = spans();
    expect([read.name, read.attributes['http.route'], read.attributes['url.path']]).toEqual(['GET /accounts/:accountId/pools/:pool', '/accounts/:accountId/pools/:pool', '/accounts/acct_0123456789/pools/pool-3']);
    expect([unknown.name, unknown.attributes['http.route']]).toEqual(['GET', undefined]);
  });

  it('when the actors app serves a request that is not an actor method (a deactivation), then its span is named by its method alone', () => {
    const req = Object.assign(new EventEmitter(), { method: 'DELETE', url: '/actors/FundsHold/acct_0123456789%3Apool-3', headers: {} });
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    requestContext()(req, res, () => undefined);
    res.emit('finish');
    const [server] = spans();
    expect([server.name, server.attributes['url.path']]).toEqual(['DELETE', '/actors/FundsHold/acct_0123456789%3Apool-3']);
  });

  it('when daprd probes health, then the request has a context but no span', () => {
    const req = Object.assign(new EventEmitter(), { method: 'GET', url: '/healthz', headers: {} });
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    let seen: ReturnType<typeof currentContext>;
    requestContext()(req, res, () => {
      seen = currentContext();
    });
    res.emit('finish');
    expect(seen!.span).toBeUndefined();
    expect(spans()).toHaveLength(0);
  });
});
