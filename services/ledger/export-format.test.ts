import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { BillItem, ConsoleItem, UsageItem } from './console';
import { csvCell, exportHeaders, exportStream } from './export-format';

const bill: BillItem = { id: 'credit:a:pool-3:r,1', occurredAt: '2025-03-01T10:00:00.000Z', kind: 'credit', amount: 5, balanceDelta: 5, reference: 'say "hi", then\nleave' };
const usage: UsageItem = {
  id: 'img:t1:late-artifact:usage:IMAGE', occurredAt: '2025-03-01T10:00:00.000Z', unit: 'IMAGE', quantity: 1, unitPrice: 40_000_000, cost: 40_000_000, charged: 0,
  platformBorne: true, holdId: 'img:t1', requestId: 'req-1', taskId: 't1', model: 'sim-image', profileId: 'p-1',
};

async function* chunksOf(...chunks: ConsoleItem[][]): AsyncGenerator<ConsoleItem[]> {
  yield* chunks;
}

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.toString();
  return out;
}

describe('export formats', () => {
  it('when bills are exported as CSV, then a header row and one row per item, quoted where needed, absent fields empty', async () => {
    const csv = await text(exportStream('bills', 'csv', chunksOf([bill], [{ ...bill, id: 'b2', kind: 'charge', amount: 7, balanceDelta: -7, reference: undefined, holdId: 'h', requestId: 'r', model: 'm', profileId: 'p' }])));
    expect(csv).toBe([
      'id,occurredAt,kind,amount,balanceDelta,holdId,requestId,taskId,model,profileId,reference',
      '"credit:a:pool-3:r,1",2025-03-01T10:00:00.000Z,credit,5,5,,,,,,"say ""hi"", then\nleave"',
      'b2,2025-03-01T10:00:00.000Z,charge,7,-7,h,r,,m,p,',
      '',
    ].join('\n'));
  });

  it('when usage is exported as CSV, then booleans read true/false and amounts are exact integers', async () => {
    const csv = await text(exportStream('usage', 'csv', chunksOf([usage])));
    expect(csv.split('\n')).toEqual([
      'id,occurredAt,unit,quantity,unitPrice,cost,charged,platformBorne,holdId,requestId,taskId,model,profileId,reasoningTokens,upstream,attempts',
      'img:t1:late-artifact:usage:IMAGE,2025-03-01T10:00:00.000Z,IMAGE,1,40000000,40000000,0,true,img:t1,req-1,t1,sim-image,p-1,,,',
      '',
    ]);
  });

  it('when usage with a route is exported as CSV, then its last columns are upstream and the attempts in order, quoted where needed; a row without one leaves them empty', async () => {
    const routed: UsageItem = {
      ...usage, id: 'h:usage:TEXT_OUTPUT', unit: 'TEXT_OUTPUT', holdId: 'h', taskId: undefined, platformBorne: false, charged: 40_000_000, reasoningTokens: 0,
      route: { upstream: 'b,2', attempts: [{ upstream: 'a', outcome: 'timeout', durationMs: 30_000, platformBorne: true }, { upstream: 'b,2', outcome: 'served', durationMs: 340 }] },
    };
    const csv = await text(exportStream('usage', 'csv', chunksOf([routed, usage])));
    expect(csv.split('\n')).toEqual([
      'id,occurredAt,unit,quantity,unitPrice,cost,charged,platformBorne,holdId,requestId,taskId,model,profileId,reasoningTokens,upstream,attempts',
      'h:usage:TEXT_OUTPUT,2025-03-01T10:00:00.000Z,TEXT_OUTPUT,1,40000000,40000000,40000000,false,h,req-1,,sim-image,p-1,0,"b,2","a:timeout:30000ms:borne;b,2:served:340ms"',
      'img:t1:late-artifact:usage:IMAGE,2025-03-01T10:00:00.000Z,IMAGE,1,40000000,40000000,0,true,img:t1,req-1,t1,sim-image,p-1,,,',
      '',
    ]);
    const lines = (await text(exportStream('usage', 'jsonl', chunksOf([routed])))).split('\n');
    expect(JSON.parse(lines[0])).toEqual(JSON.parse(JSON.stringify(routed)));
    expect(JSON.parse(lines[0]).route).toEqual(routed.route);
  });

  it('when items are exported as JSON Lines, then each line is the page item itself', async () => {
    const lines = (await text(exportStream('usage', 'jsonl', chunksOf([usage, usage], [usage])))).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines.slice(0, 3).map((line) => JSON.parse(line))).toEqual([usage, usage, usage]);
  });

  it('when there is nothing to export, then CSV is the header row alone and JSON Lines is empty', async () => {
    expect(await text(exportStream('bills', 'csv', chunksOf()))).toBe('id,occurredAt,kind,amount,balanceDelta,holdId,requestId,taskId,model,profileId,reference\n');
    expect(await text(exportStream('bills', 'jsonl', chunksOf()))).toBe('');
  });

  it('when nobody reads the export, then only a few chunks are pulled from the store; destroying it stops the pulling', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<ConsoleItem[]> {
      for (;;) {
        pulled += 1;
        yield Array.from({ length: 100 }, (_, i) => ({ ...bill, id: `b${pulled}-${i}` }));
      }
    }
    const stream = exportStream('bills', 'jsonl', endless());
    stream.once('data', () => stream.pause());
    await new Promise((r) => setTimeout(r, 100));
    expect(pulled).toBeGreaterThan(0);
    expect(pulled).toBeLessThan(10);
    stream.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const after = pulled;
    await new Promise((r) => setTimeout(r, 50));
    expect(pulled).toBe(after);
  });

  it('when reading fails midway, then the stream errors instead of ending as if complete', async () => {
    async function* failing(): AsyncGenerator<ConsoleItem[]> {
      yield [bill];
      throw new Error('store gone');
    }
    await expect(text(exportStream('bills', 'csv', failing()))).rejects.toThrow('store gone');
  });

  it('when rows are written, then each ends in \\n alone, not RFC 4180\'s CRLF, and docs/console.md says so', async () => {
    const csv = await text(exportStream('bills', 'csv', chunksOf([bill], [{ ...bill, reference: 'plain' }])));
    expect(csv.match(/\r?\n(?=[^"]*("[^"]*"[^"]*)*$)/g)).toEqual(['\n', '\n', '\n']);
    const page = readFileSync(join(__dirname, '../../docs/console.md'), 'utf8').replace(/\s+/g, ' ');
    expect(page).toContain("- **CSV** (RFC 4180's quoting, but each row ending in `\\n` alone, not RFC 4180's CRLF");
  });

  it('when the headers of an export are asked, then its type and an attachment name', () => {
    expect(exportHeaders('usage', 'jsonl')).toMatchObject({ 'content-type': 'application/x-ndjson; charset=utf-8', 'content-disposition': 'attachment; filename="usage.jsonl"' });
    expect(exportHeaders('bills', 'csv')).toMatchObject({ 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="bills.csv"' });
  });
});

describe('a CSV cell', () => {
  it.each([
    [undefined, ''],
    [null, ''],
    ['', ''],
    [' spaced ', ' spaced '],
    [0, '0'],
    [-7, '-7'],
    [9_007_199_254_740_991, '9007199254740991'],
    [true, 'true'],
    [false, 'false'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['"', '""""'],
    ['line\nbreak', '"line\nbreak"'],
    ['carriage\rreturn', '"carriage\rreturn"'],
    ['=1+1', '=1+1'],
    ['ünïcødé ✓', 'ünïcødé ✓'],
  ])('when %j is written, then it reads %j (RFC 4180 quoting: only for a comma, a quote or a line break)', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});
