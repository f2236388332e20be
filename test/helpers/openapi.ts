// Checks an answer against a committed OpenAPI document: the schema of its route, status and media type, or,
// for a path or method no operation describes, the document's `x-unrouted-responses`.
// Every test that calls either listener through the test app runs each answer through its document's check.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';

export interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown; example?: unknown }>;
}
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Record<string, unknown>;
}
export interface OperationObject {
  operationId: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Record<string, unknown>; example?: unknown }> };
  responses: Record<string, Response>;
}
export interface Document {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Record<string, unknown>>; responses?: Record<string, Response> };
  'x-unrouted-responses': Record<string, Response>;
}

export const PUBLIC_DOCUMENT = 'schemas/openapi.json';
export const MANAGEMENT_DOCUMENT = 'schemas/management-openapi.json';

export const readDocument = (file: string): Document => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as Document;

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const pointerOf = (...segments: string[]) => segments.map(escape).join('/');

export interface Checker {
  (method: string, url: string, res: LightMyRequestResponse): void;
  /** The document the checker reads. */
  document: Document;
  /** The template a concrete path falls under (the router's choice: a literal segment before a parameter). */
  templateOf(path: string): string | undefined;
}

/**
 * A check that throws when an answer's status, media type or body is not what the document declares for the
 * operation; with `unrouted`, also for a path no operation describes or a method its path does not answer
 * (then `x-unrouted-responses`). Without it such answers pass (the UI's assets are not in the document).
 */
export function documentChecker(file: string, opts: { unrouted: boolean }): Checker {
  const doc = readDocument(file);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc as object, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  const literalFirst = (a: string, b: string) => {
    const [x, y] = [a.split('/'), b.split('/')];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const [px, py] = [x[i]!.startsWith('{'), y[i]!.startsWith('{')];
      if (px !== py) return px ? 1 : -1;
    }
    return 0;
  };
  const templates = Object.keys(doc.paths)
    .sort(literalFirst)
    // An empty value is a value: `/v1/cards//lock` is the template with cardId "" (RFC 6570), which the route refuses.
    .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]*')}$`) }));
  const templateOf = (path: string) => templates.find((t) => t.pattern.test(path))?.template;

  const check = (method: string, url: string, res: LightMyRequestResponse) => {
    const path = url.split('?')[0]!;
    const template = templateOf(path);
    const methods = template ? doc.paths[template]! : {};
    // HEAD is answered as the GET of its path, without a body.
    const lower = method.toLowerCase() === 'head' && methods.get ? 'get' : method.toLowerCase();
    const operation = methods[lower];
    if (!operation && !opts.unrouted) return;
    const where = operation ? `${method} ${template} → ${res.statusCode}` : `${method} ${path} (no operation) → ${res.statusCode}`;
    const base = operation ? ['paths', template!, lower, 'responses'] : ['x-unrouted-responses'];
    let response = (operation ? operation.responses : doc['x-unrouted-responses'])[String(res.statusCode)];
    if (response?.$ref) {
      const name = response.$ref.replace('#/components/responses/', '');
      response = doc.components.responses?.[name];
      base.splice(0, base.length, 'components', 'responses', name);
    } else base.push(String(res.statusCode));
    if (!response) {
      const listed = operation ? 'this operation' : 'x-unrouted-responses';
      throw new Error(`${where}: the OpenAPI document (${file}) lists no ${res.statusCode} for ${listed} (body: ${res.body.slice(0, 300)})`);
    }
    if (!operation && res.statusCode === 405 && !res.headers.allow) throw new Error(`${where}: a 405 without Allow`);
    // A HEAD answer has no body to check.
    if (!response.content || method.toUpperCase() === 'HEAD') return;
    const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!(mediaType in response.content)) {
      throw new Error(`${where}: answered ${mediaType}, the document lists ${Object.keys(response.content).join(', ')} (body: ${res.body.slice(0, 300)})`);
    }
    // Another representation than JSON (a report's CSV, the metrics' text): its media type is what the document can check.
    if (!/[/+]json$/.test(mediaType)) return;
    const pointer = pointerOf(...base, 'content', mediaType, 'schema');
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi#/${pointer}` });
      compiled.set(pointer, validate);
    }
    if (!validate(JSON.parse(res.body))) {
      throw new Error(`${where}: the body does not match the document: ${ajv.errorsText(validate.errors)} (body: ${res.body.slice(0, 300)})`);
    }
  };
  return Object.assign(check, { document: doc, templateOf });
}

/**
 * The test app's check: a documented route answered with a status or media type its document does not list,
 * or a body its schema refuses. Paths and methods the document does not describe pass.
 */
export const checkAgainstDocument = documentChecker(PUBLIC_DOCUMENT, { unrouted: false });

/** The same for the management listener's answers (TestApp.management()). */
export const checkAgainstManagementDocument = documentChecker(MANAGEMENT_DOCUMENT, { unrouted: false });
