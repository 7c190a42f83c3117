// Real answers read against the OpenAPI document: each answer's status must be declared for its
// operation, a JSON body must match the schema declared for that status, and (when the answer's
// headers were kept) a header declared required must be there and a declared header present must
// match its schema. The document's
// schemas are JSON Schema 2020-12 (OpenAPI 3.1), checked with zod's fromJSONSchema (no other
// validator is installed). End-to-end suites record every answer they get from the gateway
// (recordAnswers) and end with one test that lists every divergence.

import { z } from 'zod';
import { openApiDocument } from '../../services/gateway/openapi';

type Schema = Record<string, unknown>;
interface DeclaredResponse {
  content?: Record<string, { schema?: Schema }>;
  headers?: Record<string, { required?: boolean; schema: Schema }>;
}
interface Operation {
  responses: Record<string, DeclaredResponse>;
}

export interface Answer {
  method: string;
  url: string;
  status: number;
  contentType: string;
  /** The parsed body of a JSON answer (other bodies are not read: streams stay the caller's). */
  body?: unknown;
  /** The answer's headers, names in lower case; without them its headers are not read. */
  headers?: Record<string, string>;
}

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';
/** fromJSONSchema resolves local $defs only: the components' references are pointed there. */
const asDefs = (value: unknown): any => JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"#/$defs/'));
const DEFS = asDefs(openApiDocument.components.schemas);

const validators = new Map<string, z.ZodType>();
function validatorOf(schema: Schema): z.ZodType {
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (!validator) {
    validator = z.fromJSONSchema({ $schema: DRAFT, $defs: DEFS, ...asDefs(schema) });
    validators.set(key, validator);
  }
  return validator;
}

const OPERATIONS = Object.entries(openApiDocument.paths as unknown as Record<string, Record<string, Operation>>).map(([template, methods]) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  methods,
}));

/** The described operation a request reached, if the document describes it. */
export function operationOf(method: string, pathname: string): { template: string; operation: Operation } | undefined {
  for (const { template, pattern, methods } of OPERATIONS) {
    const operation = methods[method.toLowerCase()];
    if (operation && pattern.test(pathname)) return { template, operation };
  }
  return undefined;
}

/** What is wrong with one answer, by the document; empty when it conforms or is not described. */
export function violationsOf(answer: Answer): string[] {
  const { pathname } = new URL(answer.url);
  const found = operationOf(answer.method, pathname);
  // The prototype session routes and unknown routes are not part of the document.
  if (!found) return [];
  const where = `${answer.method} ${found.template} → ${answer.status}`;
  const declared = found.operation.responses[String(answer.status)] ?? found.operation.responses.default;
  if (!declared) return [`${where}: status not declared (declared: ${Object.keys(found.operation.responses).join(', ')})`];
  return [...headerViolations(where, declared, answer.headers), ...bodyViolations(where, declared, answer)];
}

/** A header's text as its schema reads it: a number for an integer header. */
const headerValue = (text: string, schema: Schema): unknown => (schema.type === 'integer' && /^-?[0-9]+$/.test(text) ? Number(text) : text);

function headerViolations(where: string, declared: DeclaredResponse, headers: Record<string, string> | undefined): string[] {
  if (!headers) return [];
  return Object.entries(declared.headers ?? {}).flatMap(([name, header]) => {
    const text = headers[name.toLowerCase()];
    if (text === undefined) return header.required ? [`${where}: required header ${name} missing`] : [];
    return validatorOf(header.schema).safeParse(headerValue(text, header.schema)).success ? [] : [`${where}: header ${name}: ${JSON.stringify(text)} does not match its schema`];
  });
}

function bodyViolations(where: string, declared: DeclaredResponse, answer: Answer): string[] {
  const isJson = /^application\/(.+\+)?json/i.test(answer.contentType);
  if (!isJson || !declared.content) return [];
  const schema = declared.content['application/json']?.schema;
  if (!schema) return [`${where}: answered application/json, declared ${Object.keys(declared.content).join(', ')}`];
  const result = validatorOf(schema).safeParse(answer.body);
  if (result.success) return [];
  const issue = result.error.issues[0];
  return [`${where}: body does not match the declared schema at ${issue.path.join('.') || '(root)'}: ${issue.message} — ${JSON.stringify(answer.body).slice(0, 300)}`];
}

function methodOf(input: RequestInfo | URL, init?: RequestInit): string {
  return (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
}

function urlOf(input: RequestInfo | URL): string {
  return input instanceof Request ? input.url : String(input);
}

/**
 * Records every answer the test process's fetch (the SDKs' too) gets from the deployment at
 * `base()`, from the describe's beforeAll to its afterAll. Call inside a describe block.
 */
export function recordAnswers(base: () => string | undefined): { answers: Answer[]; violations(): string[] } {
  const answers: Answer[] = [];
  let original: typeof fetch | undefined;
  beforeAll(() => {
    original = globalThis.fetch;
    const through = original;
    globalThis.fetch = async function recordedFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
      const response = await through(input, init);
      const url = urlOf(input);
      const prefix = base();
      if (prefix === undefined || !url.startsWith(prefix)) return response;
      const contentType = response.headers.get('content-type') ?? '';
      const answer: Answer = { method: methodOf(input, init), url, status: response.status, contentType, headers: Object.fromEntries(response.headers) };
      if (/^application\/(.+\+)?json/i.test(contentType)) {
        const text = await response.clone().text();
        try {
          answer.body = JSON.parse(text);
        } catch {
          answer.body = text;
        }
      }
      answers.push(answer);
      return response;
    } as typeof fetch;
  });
  afterAll(() => {
    if (original) globalThis.fetch = original;
  });
  return { answers, violations: () => answers.flatMap(violationsOf) };
}

/** The closing test of a suite that recorded its answers. */
export function itConformsToOpenApi(recorded: { answers: Answer[]; violations(): string[] }): void {
  it('when every answer this suite got is read against the OpenAPI document, then its status is declared for its operation and its body matches the declared schema', () => {
    expect(recorded.answers.length).toBeGreaterThan(0);
    expect([...new Set(recorded.violations())]).toEqual([]);
  });
}
