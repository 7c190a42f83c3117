// Spending by day and by model: a uPlot chart (canvas, drawn by script, no inline style in the
// document), with the same numbers in a table for screen readers and for reading.

import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { usd, usdTick, type Spending } from './format';


const AXIS_FONT = '12px system-ui, sans-serif';
let measure: CanvasRenderingContext2D | null | undefined;
/** The USD axis as wide as its longest label ($0.00000125 as much as $1,250.00), plus its ticks and gap. */
function axisWidth(labels: string[]): number {
  measure ??= document.createElement('canvas').getContext('2d');
  if (!measure) return 90;
  measure.font = AXIS_FONT;
  return Math.ceil(Math.max(0, ...labels.map((label) => measure!.measureText(label).width))) + 24;
}

const COLORS = ['#2563eb', '#db2777', '#059669', '#d97706', '#7c3aed', '#0891b2', '#dc2626', '#4b5563'];

export function SpendingChart({ spending }: { spending: Spending }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || spending.days.length === 0) return;
    const xs = spending.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const totals = spending.days.map((_, i) => spending.charged.reduce((sum, m) => sum + (m[i] ?? 0), 0));
    const toUsd = (nano: number) => nano / 1e9;
    const plot = new uPlot({
      // As wide as its card, on a phone too; it follows the card when the window changes.
      width: box.current.clientWidth,
      height: 260,
      // The bars are UTC days: the axis is told in UTC too, whatever the browser's time zone.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      legend: { live: false },
      axes: [{}, { values: (_u, ticks) => ticks.map(usdTick), font: AXIS_FONT, size: (_u, values) => axisWidth(values ?? []) }],
      series: [
        { value: (_u, v) => (v == null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
        { label: 'All models', stroke: '#111827', fill: 'rgba(17,24,39,0.08)', paths: uPlot.paths.bars!({ size: [0.6, 60] }), value: (_u, v) => (v == null ? '' : usd(Math.round(v * 1e9))) },
        ...spending.models.map((model, i) => ({ label: model, stroke: COLORS[i % COLORS.length], width: 2, points: { show: true }, value: (_u: uPlot, v: number | null) => (v == null ? '' : usd(Math.round(v * 1e9))) })),
      ],
    }, [xs, totals.map(toUsd), ...spending.charged.map((m) => m.map(toUsd))], box.current);
    const chart = box.current;
    const resized = new ResizeObserver(() => { if (chart.clientWidth !== plot.width) plot.setSize({ width: chart.clientWidth, height: 260 }); });
    resized.observe(chart);
    return () => { resized.disconnect(); plot.destroy(); };
  }, [spending]);
  return (
    <figure>
      <div ref={box} class="chart" role="img" aria-label="Chart of the amount charged per day, in total and by model; the same numbers are in the table below" />
      <figcaption class="muted">Charged per UTC day, last 30 days.</figcaption>
    </figure>
  );
}
