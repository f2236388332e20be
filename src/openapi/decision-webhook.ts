// The call the gateway makes to a tenant's real-time decision endpoint, declared as an OpenAPI 3.1 webhook of the
// public document: the signed request, and the one answer that is not an error (decision 0338).
import { DECISION_ANSWER_MAX_BYTES, DecisionAnswer, DecisionRequest } from '../../schemas/authorizations.js';
import { DECISION_DEADLINE_DEFAULT_MS, DECISION_DEADLINE_MAX_MS } from '../../schemas/tenant.js';

const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema)) as unknown;

const signatureHeader = (name: string, description: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } });

/** `webhooks` of the public document, its schemas hoisted like the paths'. */
export function decisionWebhooks(hoist: (schema: unknown) => unknown): Record<string, unknown> {
  return {
    'authorization.decision': {
      post: {
        operationId: 'authorizationDecision',
        summary: "The tenant's real-time decision endpoint: asked once per authorization, after the spend controls",
        description:
          `Configured as \`authorization.decision\` (PATCH /v1/admin/config). Signed per Standard Webhooks with the endpoint's \`whsec_\` ` +
          `secret; \`webhook-id\` is the authorization id. The gateway waits \`deadlineMs\` (default ${DECISION_DEADLINE_DEFAULT_MS}, at most ` +
          `${DECISION_DEADLINE_MAX_MS}); no answer by then, any status but 200, a body that is not this JSON or is longer than ` +
          `${DECISION_ANSWER_MAX_BYTES} bytes, or amounts that do not fit the authorization are the stand-in's case. A timeout raises ` +
          '`authorization.decision-timed-out`; a late answer that differs from the stand-in raises `authorization.decision-late`.',
        tags: ['Authorizations'],
        // Authenticated by its signature, not by a security scheme of the gateway's.
        security: [],
        parameters: [
          signatureHeader('webhook-id', 'the authorization id (the same on a retry of the same authorization)'),
          signatureHeader('webhook-timestamp', 'seconds since the epoch'),
          signatureHeader('webhook-signature', '`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret'),
        ],
        requestBody: { required: true, content: { 'application/json': { schema: hoist(plain(DecisionRequest)) } } },
        responses: {
          '200': {
            description: 'The decision',
            content: {
              'application/json': {
                schema: hoist(plain(DecisionAnswer)),
                examples: {
                  approved: { value: { approved: true } },
                  partial: { value: { approved: true, approvedAmount: '20.00' } },
                  declined: { value: { approved: false, declineReason: 'INSUFFICIENT_CREDIT' } },
                },
              },
            },
          },
        },
      },
    },
  };
}
