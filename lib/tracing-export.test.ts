// A failing collector is told, not silent: the exporter reports lost spans at most once a minute.

import { SpanKind } from '@opentelemetry/api';
import type { tracing as sdkTrace } from '@opentelemetry/sdk-node';
import { createLogger } from './logger';
import { contextFromHeaders, runWithContext } from './request-context';
import { EXPORT_FAILURE_REPORT_MS, ReportingExporter, startSpan, startTracing, stopTracing } from './tracing';

function exporterThat(answers: number[]): sdkTrace.SpanExporter {
  return {
    export: (_spans, done) => done(answers.shift() === 0 ? { code: 0 } : { code: 1, error: new Error('collector timed out') }),
    shutdown: async () => undefined,
  };
}

describe('trace export failures', () => {
  it('when exports fail, then the first failure is told at once with its lost spans, later ones at most once a minute with what was lost since', () => {
    let now = 1_000_000;
    const reports: { error: unknown; lostSpans: number; failedExports: number }[] = [];
    const exporter = new ReportingExporter(exporterThat([1, 1, 0, 1, 1]), (failure) => reports.push(failure), () => now);
    const spans = (n: number) => Array.from({ length: n }) as sdkTrace.ReadableSpan[];
    const results: number[] = [];
    exporter.export(spans(3), (r) => results.push(r.code));
    exporter.export(spans(5), (r) => results.push(r.code));
    exporter.export(spans(2), (r) => results.push(r.code));
    now += EXPORT_FAILURE_REPORT_MS - 1;
    exporter.export(spans(4), (r) => results.push(r.code));
    now += 1;
    exporter.export(spans(6), (r) => results.push(r.code));
    // The SDK still hears every result as it was.
    expect(results).toEqual([1, 1, 0, 1, 1]);
    expect(reports.map(({ lostSpans, failedExports }) => [lostSpans, failedExports])).toEqual([[3, 1], [5 + 4 + 6, 4]]);
    expect((reports[0].error as Error).message).toBe('collector timed out');
  });
});

describe('trace export outside any request', () => {
  afterEach(() => stopTracing());

  it('when a span of a request is exported and the export fails later, then the warning carries no request\'s ids', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('test', 'info', { write: (chunk: string) => lines.push(JSON.parse(chunk)) });
    // A collector that refuses a moment later, as a real one answers: the answer comes in
    // whatever context the export was started in.
    let exported!: () => void;
    const refused = new Promise<void>((resolve) => (exported = resolve));
    const refusing: sdkTrace.SpanExporter = {
      export: (_spans, done) => setTimeout(() => {
        done({ code: 1, error: new Error('connect ECONNREFUSED') });
        exported();
      }, 5),
      shutdown: async () => undefined,
    };
    expect(startTracing('unit', { exporter: refusing, logger })).toBe(true);
    runWithContext(contextFromHeaders({}, 'req-export'), () => startSpan('GET', { kind: SpanKind.SERVER })!.end());
    await refused;
    const warning = lines.find((line) => String(line.msg).startsWith('trace export failed'));
    expect(warning).toMatchObject({ level: 40, lostSpans: 1, failedExports: 1 });
    expect(warning).not.toHaveProperty('requestId');
    expect(warning).not.toHaveProperty('traceId');
  });
});
