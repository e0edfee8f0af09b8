// The producer's OpenAPI document for the tests: walked as plain JSON, and its schemas compiled
// with Ajv's JSON Schema 2020-12 (the dialect of OpenAPI 3.1's schemas) to hold requests and
// answers to. `conforms` checks one exchange against the operation the document gives it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { openApi } from '../../functions/producer/openapi.js';

// biome-ignore lint/suspicious/noExplicitAny: the document and the answers are walked as untyped JSON
export type Json = Record<string, any>;

export const doc = openApi() as Json;

/** Every documented operation, keyed `METHOD /path/{param}`. */
export const operations = Object.entries(doc.paths as Json).flatMap(([path, methods]) =>
  Object.entries(methods as Json).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, method, path, op: op as Json })),
);

/** The operation a request reaches, by its method and the path templates. */
export function operationOf(method: string, pathname: string) {
  return operations.find((o) => o.method === method.toLowerCase() && new RegExp(`^${o.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(pathname));
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(doc, 'openapi');
const compiled = new Map<string, ValidateFunction>();

/** The schema at this path of the document (JSON Pointer tokens), compiled once. */
export function schemaAt(...tokens: string[]): ValidateFunction {
  const ref = `openapi#/${tokens.map((t) => encodeURIComponent(t.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;
  let validate = compiled.get(ref);
  if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })));
  return validate;
}

export function expectValid(validate: ValidateFunction, value: unknown, what: string): void {
  const ok = validate(value);
  expect(ok, `${what}: ${JSON.stringify(value)} does not match the document: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

/** A problem code's title, as the document lists it. */
const titles = new Map<string, string>((doc.components.schemas.ProblemCode.oneOf as Json[]).map((b) => [b.const, b.title]));

export interface Exchange {
  /** `METHOD /path/{param}`, or `METHOD <undocumented>` for a path or method no operation has. */
  key: string;
  status: number;
  body: Json;
  headers: Headers;
}

/**
 * Holds an answer to the document: its status is one the operation lists, its media type one
 * that status lists, its body valid by that schema, each header it sends one the document
 * lists there (and each required one sent); a problem's type and title are its code's. An
 * answer to a path or method with no operation (404, 405) must be a Problem.
 */
export async function conforms(request: Request, res: Response): Promise<Exchange> {
  const { pathname } = new URL(request.url);
  const found = operationOf(request.method, pathname);
  const key = found?.key ?? `${request.method} <undocumented>`;
  const media = res.headers.get('Content-Type')?.split(';')[0] ?? '';
  const body = (await res.json()) as Json;
  let listed: string[] = [];
  if (found) {
    const response = found.op.responses[res.status];
    expect(response, `${key} answered ${res.status}, which the document does not list`).toBeDefined();
    expect(Object.keys(response.content), `${key} ${res.status}`).toContain(media);
    expectValid(schemaAt('paths', found.path, found.method, 'responses', String(res.status), 'content', media, 'schema'), body, `${key} ${res.status}`);
    listed = Object.keys(response.headers ?? {});
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const required = doc.components.headers[(header as Json).$ref.split('/').pop()].required;
      if (required) expect(res.headers.has(name), `${key} ${res.status} sends ${name}`).toBe(true);
    }
  } else {
    // no operation: the document's X-Request-Id (on every answer) is all it may send
    listed = ['X-Request-Id'];
    expect(media, `${key} ${res.status}`).toBe('application/problem+json');
    expectValid(schemaAt('components', 'schemas', 'Problem'), body, `${key} ${res.status}`);
  }
  const sent = [...res.headers.keys()].filter((name) => name !== 'content-type' && name !== 'content-length');
  for (const name of sent)
    expect(
      listed.map((h) => h.toLowerCase()),
      `${key} ${res.status} sends ${name}, which the document does not list there`,
    ).toContain(name);
  if (media === 'application/problem+json') {
    expect(body.type).toBe(`urn:emq:problem:${body.code}`);
    expect(body.title).toBe(titles.get(body.code));
    expect(body.status).toBe(res.status);
  }
  return { key, status: res.status, body, headers: res.headers };
}

/** Holds a request to the document: each header it sends is one its operation lists, and a JSON body is valid by its schema. */
export async function requestConforms(request: Request): Promise<void> {
  const { pathname } = new URL(request.url);
  const found = operationOf(request.method, pathname);
  expect(found, `${request.method} ${pathname} is no documented operation`).toBeDefined();
  const { key, path, method, op } = found!;
  const params = (op.parameters as Json[]).map((p) => doc.components.parameters[p.$ref.split('/').pop()]).filter((p) => p.in === 'header');
  const own = ['content-type', 'content-length', ...(op.security ? ['authorization'] : [])];
  for (const name of request.headers.keys()) {
    if (!own.includes(name))
      expect(
        params.map((p) => p.name.toLowerCase()),
        `${key} is sent ${name}`,
      ).toContain(name);
  }
  const media = request.headers.get('Content-Type')?.split(';')[0];
  if (op.requestBody && media === 'application/json') {
    expectValid(schemaAt('paths', path, method, 'requestBody', 'content', media, 'schema'), await request.json(), `${key} request`);
  }
}
