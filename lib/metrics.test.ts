import { exposition, methodLabel, metrics, routeFamily, type RouteFamily } from './metrics';

describe('routeFamily', () => {
  const cases: [string, RouteFamily][] = [
    ['/api/open/v1/models/sim-chat/chat', 'open'],
    ['/api/open/v1/models/sim-chat/chat/anthropic', 'open'],
    ['/api/open/v1/models/sim-image/images/generations', 'open'],
    ['/api/open/v1/models/sim-image/images/tasks/0b0c6a8e-1111-4a4a-8a8a-000000000000', 'open'],
    ['/v1/chat/completions', 'compat'],
    ['/v1/messages', 'compat'],
    ['/v1/models', 'compat'],
    ['/api/member/v1/entitlement', 'member'],
    ['/api/member/v1/models/sim-chat/chat', 'member'],
    ['/api/distribution/api-credit/balance', 'console'],
    ['/api/distribution/api-credit/bills/export?format=csv&from=2025-01-01T00:00:00Z', 'console'],
    ['/api/consumer/orders', 'orders'],
    ['/api/consumer/checkout/callback', 'orders'],
    ['/admin/v1/accounts', 'admin'],
    ['/admin/v1/reconciliation', 'admin'],
    ['/api/open/v1/catalog/models', 'catalog'],
    ['/api/open/v1/capabilities', 'catalog'],
    ['/api/open/v1/openapi.json', 'catalog'],
    ['/v1/sessions', 'prototype'],
    ['/v1/sessions/abc/events', 'prototype'],
    ['/v1/workspaces', 'prototype'],
    ['/healthz', 'health'],
    ['/readyz', 'health'],
    ['/metrics', 'health'],
    ['/metrics?name=x', 'health'],
    ['/', 'other'],
    ['/v1/modelsx', 'other'],
    ['/healthzz', 'other'],
    ['/api/open/v2/models/x/chat', 'other'],
  ];

  it.each(cases)('when the path is %s, then the family is %s', (path, family) => {
    expect(routeFamily(path)).toBe(family);
  });

  it('when the path differs only in case, then the family is the same, as Express routes it the same', () => {
    expect(routeFamily('/API/Open/V1/Models/sim-chat/chat')).toBe('open');
    expect(routeFamily('/V1/Chat/Completions')).toBe('compat');
  });
});

describe('methodLabel', () => {
  it('when the method is a common one, then it is kept; else it is OTHER', () => {
    expect(['GET', 'POST', 'DELETE'].map(methodLabel)).toEqual(['GET', 'POST', 'DELETE']);
    expect(['PROPFIND', 'MKCOL', undefined].map(methodLabel)).toEqual(['OTHER', 'OTHER', 'OTHER']);
  });
});

describe('exposition', () => {
  beforeAll(() => {
    metrics.httpRequest('open', 'POST', 200, 0.012);
    metrics.tokensBilled('TEXT_INPUT', 3);
    metrics.tokensBilled('TEXT_OUTPUT', 5);
    metrics.imageBilled();
    metrics.actorGauge('holds_open', 1);
    metrics.actorGauge('holds_open', -1);
    metrics.reminderFired('FundsHold', 'ok');
    metrics.eventPublished('billing');
    metrics.eventAcknowledged('billing');
    metrics.providerError('unavailable');
    metrics.ledgerEvent('usage', 'duplicate');
  });

  it('when scraped, then it is the Prometheus text format with every metric of the gateway, actors and ledger', async () => {
    const { contentType, body } = await exposition();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    for (const name of [
      'payg_http_requests_total', 'payg_http_request_duration_seconds', 'payg_tokens_billed_total', 'payg_images_billed_total',
      'payg_holds_open', 'payg_reminders_fired_total', 'payg_events_published_total', 'payg_events_acknowledged_total',
      'payg_provider_errors_total', 'payg_ledger_events_consumed_total',
    ]) {
      expect(body).toContain(`# TYPE ${name} `);
    }
    expect(body).toContain('payg_http_requests_total{family="open",method="POST",status="200"} 1');
    expect(body).toContain('payg_http_request_duration_seconds_bucket{le="0.025",family="open"} 1');
    expect(body).toContain('payg_tokens_billed_total{unit="TEXT_OUTPUT"} 5');
    expect(body).toContain('payg_holds_open 0');
    expect(body).toContain('payg_reminders_fired_total{actor_type="FundsHold",outcome="ok"} 1');
    expect(body).toContain('payg_provider_errors_total{kind="unavailable"} 1');
    expect(body).toContain('payg_ledger_events_consumed_total{topic="usage",outcome="duplicate"} 1');
    // The process's own metrics come along.
    expect(body).toContain('process_cpu_seconds_total');
  });

  it('when a topic is not one of ours, then it is labelled "other", never with the given string', async () => {
    metrics.eventPublished('attacker-chosen');
    const { body } = await exposition();
    expect(body).not.toContain('attacker-chosen');
    expect(body).toContain('payg_events_published_total{topic="other"} 1');
  });
});
