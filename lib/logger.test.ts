import { createLogger } from './logger';
import { contextFromHeaders, runWithContext } from './request-context';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = { write: (chunk: string) => { raw.push(chunk); lines.push(JSON.parse(chunk)); } };
  return { logger: createLogger('test', 'info', destination), lines, raw };
}

describe('createLogger', () => {
  it('when a line is logged inside a request, then it carries the request id and trace id; outside, neither', () => {
    const { logger, lines } = capture();
    const context = contextFromHeaders({}, 'req-42');
    runWithContext(context, () => logger.info({ holdId: 'h1' }, 'inside'));
    logger.info('outside');
    expect(lines[0]).toMatchObject({ service: 'test', msg: 'inside', holdId: 'h1', requestId: 'req-42', traceId: context.traceId });
    expect(lines[1]).toMatchObject({ msg: 'outside' });
    expect(lines[1]).not.toHaveProperty('requestId');
    expect(lines[1]).not.toHaveProperty('traceId');
  });

  it('when a line names the request id itself, then the key appears once', () => {
    const { logger, raw } = capture();
    runWithContext(contextFromHeaders({}, 'req-7'), () => logger.error({ requestId: 'req-7' }, 'request failed'));
    expect(raw[0].match(/"requestId"/g)).toHaveLength(1);
  });

  it('when a credential is logged by mistake, then it is redacted wherever the usual names put it', () => {
    const { logger, raw } = capture();
    logger.info({
      req: { headers: { authorization: 'Bearer sk-payg-secret-1', 'x-api-key': 'sk-payg-secret-2', cookie: 'c=secret-3' } },
      headers: { authorization: 'Bearer secret-4' },
      apiKey: 'sk-payg-secret-5',
      token: 'eyJ.secret-6',
      checkout: { secret: 'secret-7' },
      oauth: { token: 'secret-8', apiKey: 'secret-9' },
    }, 'oops');
    expect(raw[0]).not.toMatch(/secret-\d/);
    expect(raw[0]).toContain('[redacted]');
  });

  it('when the level is info, then debug lines are dropped', () => {
    const { logger, lines } = capture();
    logger.debug('hidden');
    expect(lines).toHaveLength(0);
  });
});
