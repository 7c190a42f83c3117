import { exposition, methodLabel, metrics } from './metrics';

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
