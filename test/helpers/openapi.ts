// Checks an answer against the committed OpenAPI document: the schema of its route, status and media type.
// Every test that calls the gateway through the test app runs each answer through it.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';

interface Doc {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>>;
}

const doc = JSON.parse(readFileSync(new URL('../../schemas/openapi.json', import.meta.url), 'utf8')) as Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(doc as object, 'openapi');

/** `/v1/cards/{cardId}` → a matcher for concrete paths. */
const templates = Object.keys(doc.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const compiled = new Map<string, ValidateFunction>();

/**
 * Throws when a documented route answered with a status or media type its document does not list, or a
 * body its schema refuses. Paths the document does not describe (unknown routes, the UI's assets) pass.
 */
export function checkAgainstDocument(method: string, url: string, res: LightMyRequestResponse): void {
  const path = url.split('?')[0]!;
  const found = templates.find((t) => t.pattern.test(path));
  if (!found) return;
  const operation = doc.paths[found.template]![method.toLowerCase()];
  if (!operation) return;
  const where = `${method} ${found.template} → ${res.statusCode}`;
  const response = operation.responses?.[String(res.statusCode)];
  if (!response) throw new Error(`${where}: the OpenAPI document lists no ${res.statusCode} for this operation (body: ${res.body.slice(0, 300)})`);
  if (!response.content) return;
  const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (!(mediaType in response.content)) {
    throw new Error(`${where}: answered ${mediaType}, the document lists ${Object.keys(response.content).join(', ')}`);
  }
  // Another representation than JSON (a report's CSV): its media type is what the document can check.
  if (!/[/+]json$/.test(mediaType)) return;
  const pointer = ['paths', found.template, method.toLowerCase(), 'responses', String(res.statusCode), 'content', mediaType, 'schema'].map(escape).join('/');
  let validate = compiled.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#/${pointer}` });
    compiled.set(pointer, validate);
  }
  if (!validate(JSON.parse(res.body))) {
    throw new Error(`${where}: the body does not match the document: ${ajv.errorsText(validate.errors)} (body: ${res.body.slice(0, 300)})`);
  }
}
