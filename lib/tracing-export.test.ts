// A failing collector is told, not silent: the exporter reports lost spans at most once a minute.

import type { tracing as sdkTrace } from '@opentelemetry/sdk-node';
import { EXPORT_FAILURE_REPORT_MS, ReportingExporter } from './tracing';

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
