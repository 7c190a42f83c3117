// A provider failure as the gateway's customer is told it, and as its operators find it in the
// log: against real local upstreams, through the routing every chat and embeddings call takes.
import { answeringUpstream } from '../../../test/support/answering-upstream';
import { freePort } from '../../../test/support/processes';
import pino from 'pino';
import { Writable } from 'node:stream';
import { ERROR_STATUS, GatewayError } from '../../../lib/errors';
import { OpenAiChatProvider } from '../../../providers/openai/chat';
import { startUpstream, type Upstream } from '../../../test/support/upstream';
import { UpstreamHealth } from '../routing/health';
import { openProviderCall, toGatewayProviderError, type CallRoute, type HoldHandle } from './provider-call';

const ENTRY = 'internal-entry-9';

/** A pino logger whose lines are kept. */
function recordingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { logger: pino({ level: 'info' }, sink), lines };
}

const call = () => ({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, passthrough: {}, signal: AbortSignal.timeout(5000) });

function hold(): HoldHandle & { released: string[] } {
  const released: string[] = [];
  return {
    holdId: 'h1',
    released,
    progress: { stop: () => undefined } as unknown as HoldHandle['progress'],
    release: async (reason: string) => void released.push(reason),
    settle: async () => ({ charged: 0 }),
  };
}

/** A route over `entries` (name → provider), in that order, logging to `logger`. */
function route(entries: Array<[string, OpenAiChatProvider]>, logger?: pino.Logger): CallRoute<OpenAiChatProvider> {
  return {
    routing: { health: new UpstreamHealth(), attemptTimeoutMs: 5000 },
    logger,
    key: `profile-${Math.random()}`,
    candidates: entries.map(([provider, upstream]) => ({ provider, weight: 1, upstream })),
    span: () => undefined,
  };
}

const WRONG_KEY = { error: { message: 'Incorrect API key provided: sk-plat****************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.', code: 'invalid_api_key' } };

describe('a provider failure as the customer is told it', () => {
  it('when the only upstream answers 401 echoing the platform\'s key, then 502 provider_error with a generic message; the log names the entry and has the upstream\'s words', async () => {
    const upstream = await answeringUpstream(401, WRONG_KEY);
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, apiKey: 'sk-platform-0000wxyz', maxBodyBytes: 4096 });
    const { logger, lines } = recordingLogger();
    const held = hold();
    const failure = await openProviderCall(route([[ENTRY, provider]], logger), held, new AbortController().signal, (p, signal) => p.complete({ ...call(), signal })).catch((error: unknown) => error);
    await provider.close();
    await upstream.close();
    expect(failure).toBeInstanceOf(GatewayError);
    const error = failure as GatewayError;
    expect([error.code, error.status, error.message]).toEqual(['provider_error', 502, "the provider refused the platform's credentials"]);
    for (const leak of ['sk-', ENTRY, new URL(upstream.url).host, 'Incorrect API key']) expect(error.message).not.toContain(leak);
    expect(held.released).toEqual(['provider_failed']);
    const logged = lines.find((line) => line.msg === 'provider call failed')!;
    expect(logged).toMatchObject({ provider: ENTRY, kind: 'unavailable', upstreamStatus: 401, outcome: 'unavailable' });
    expect(JSON.stringify(logged.err)).toContain(`${ENTRY} answered 401: Incorrect API key provided`);
  });

  it('when the first upstream refuses the platform\'s credentials, then the call goes on to the next, which serves it', async () => {
    const refusing = await answeringUpstream(401, WRONG_KEY);
    const healthy: Upstream = await startUpstream();
    const bad = new OpenAiChatProvider({ name: 'bad', baseUrl: refusing.url, maxBodyBytes: 4096 });
    const good = new OpenAiChatProvider({ name: 'good', baseUrl: healthy.url, maxBodyBytes: 4096 });
    const held = hold();
    const served = openProviderCall(route([['bad', bad], ['good', good]]), held, new AbortController().signal, (p, signal) => p.complete({ ...call(), signal }));
    const { opened } = await served.finally(async () => {
      await Promise.all([bad.close(), good.close()]);
      await Promise.all([refusing.close(), healthy.close()]);
    });
    expect(opened.content).toBe('tok0 tok1');
    expect(held.route).toMatchObject({ upstream: 'good', attempts: [{ upstream: 'bad', outcome: 'unavailable' }, { upstream: 'good', outcome: 'served' }] });
  });

  it('when nothing listens on the upstream\'s port, then 502 provider_error "the provider could not be reached", without the address; the log has it', async () => {
    const port = await freePort();
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: `http://127.0.0.1:${port}/v1`, maxBodyBytes: 4096 });
    const { logger, lines } = recordingLogger();
    const failure = await openProviderCall(route([[ENTRY, provider]], logger), hold(), new AbortController().signal, (p, signal) => p.complete({ ...call(), signal })).catch((error: unknown) => error);
    await provider.close();
    const error = failure as GatewayError;
    expect([error.code, error.status, error.message]).toEqual(['provider_error', 502, 'the provider could not be reached']);
    for (const leak of ['127.0.0.1', String(port), 'ECONNREFUSED', ENTRY]) expect(error.message).not.toContain(leak);
    const logged = lines.find((line) => line.msg === 'provider call failed')!;
    expect(logged).toMatchObject({ provider: ENTRY, outcome: 'refused' });
    expect(JSON.stringify(logged.err)).toContain(`127.0.0.1:${port}`);
  });

  it('when the upstream answers 400 with a useful reason, then 400 provider_rejected keeping that reason, without the entry name', async () => {
    const upstream = await answeringUpstream(400, { error: { message: `Invalid 'temperature' for ${ENTRY}: expected at most 2, got 3.`, param: 'temperature' } });
    const provider = new OpenAiChatProvider({ name: ENTRY, baseUrl: upstream.url, maxBodyBytes: 4096 });
    const held = hold();
    const failure = await openProviderCall(route([[ENTRY, provider]]), held, new AbortController().signal, (p, signal) => p.complete({ ...call(), signal })).catch((error: unknown) => error);
    await provider.close();
    await upstream.close();
    const error = failure as GatewayError;
    expect([error.code, error.status]).toEqual(['provider_rejected', 400]);
    // The bill's reason says the same: a rejection, not a failure of the provider's.
    expect(held.released).toEqual(['provider_rejected']);
    expect(error.message).toBe("the provider rejected the request (400): Invalid 'temperature' for the provider: expected at most 2, got 3.");
    expect(error.message).not.toContain(ENTRY);
  });

  it('when anything but a ProviderError failed the call, then only "the provider failed"', () => {
    const error = toGatewayProviderError(new Error('connect ECONNREFUSED 10.0.0.1:443'));
    expect([error.code, ERROR_STATUS[error.code], error.message]).toEqual(['provider_error', 502, 'the provider failed']);
  });
});
