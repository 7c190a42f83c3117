import { openApiDocument } from './openapi';

type Operation = { parameters: Array<{ name: string; in: string; schema: Record<string, unknown> }>; responses: Record<string, { content?: Record<string, unknown> }> };

describe('OpenAPI document: console bills and usage', () => {
  const paths = openApiDocument.paths as unknown as Record<string, { get: Operation }>;

  it('when the page routes are read, then page and size are described with their bounds, the filters with theirs, and 200/400/401 answers', () => {
    for (const kind of ['bills', 'usage']) {
      const page = paths[`/api/distribution/api-credit/${kind}/page`].get;
      expect(page.parameters.map((p) => [p.name, p.in, p.schema])).toEqual([
        ['page', 'query', { type: 'integer', minimum: 1, default: 1 }],
        ['size', 'query', { type: 'integer', minimum: 1, maximum: 100, default: 20 }],
        ['from', 'query', { type: 'string', format: 'date-time' }],
        ['to', 'query', { type: 'string', format: 'date-time' }],
        ['model', 'query', { type: 'string', minLength: 1, maxLength: 256 }],
        ...(kind === 'bills' ? [['kind', 'query', { type: 'string', enum: ['credit', 'debit', 'hold', 'charge', 'release', 'platform_borne'] }]] : []),
        ['images', 'query', { type: 'string', enum: ['true', 'false'] }],
        ['through', 'query', { type: 'integer', minimum: 0 }],
      ]);
      expect(Object.keys(page.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
      expect(JSON.stringify(page.responses['200'].content)).toContain(kind === 'bills' ? '#/components/schemas/BillPage' : '#/components/schemas/UsagePage');
    }
  });

  it('when the export routes are read, then format (csv by default) and the filters of the pages are described, and both media types', () => {
    for (const kind of ['bills', 'usage']) {
      const exported = paths[`/api/distribution/api-credit/${kind}/export`].get;
      const page = paths[`/api/distribution/api-credit/${kind}/page`].get;
      expect(exported.parameters.map((p) => p.name)).toEqual(kind === 'bills' ? ['format', 'from', 'to', 'model', 'kind', 'images', 'through'] : ['format', 'from', 'to', 'model', 'images', 'through']);
      expect(exported.parameters.slice(1)).toEqual(page.parameters.slice(2));
      expect(exported.parameters[0].schema).toEqual({ type: 'string', enum: ['csv', 'jsonl'], default: 'csv' });
      expect(Object.keys(exported.responses['200'].content ?? {})).toEqual(['text/csv', 'application/x-ndjson']);
      expect(Object.keys(exported.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    }
    const schemas = openApiDocument.components.schemas as unknown as Record<string, { required: string[] }>;
    expect(schemas.UsageItem.required).toEqual(expect.arrayContaining(['charged', 'platformBorne', 'unit', 'cost']));
    expect(schemas.BillItem.required).toEqual(['id', 'occurredAt', 'kind', 'amount', 'balanceDelta']);
  });
});
