// Problem records (spec 2.8) as tests expect them whole: a business refusal and a validation failure.
import { PROBLEM_BASE } from './app.js';

/** A problem-with-message record: `error.http.<status>`, or `error.business` with its businessCode. */
export const problem = (status: number, title: string, detail: string, businessCode?: string) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title,
  status,
  message: businessCode ? 'error.business' : `error.http.${status}`,
  detail,
  ...(businessCode ? { businessCode } : {}),
});

export const businessProblem = (title: string, businessCode: string, detail: string) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title,
  status: 409,
  message: 'error.business',
  detail,
  businessCode,
});

export const validationProblem = (objectName: string, ...fields: [field: string, message: string][]) => ({
  type: `${PROBLEM_BASE}/constraint-violation`,
  title: 'Method argument not valid',
  status: 400,
  message: 'error.validation',
  fieldErrors: fields.map(([field, message]) => ({ field, message, objectName })),
});

/**
 * The management listener's 401 detail: how to get a key while the gateway runs (the listener as the caller
 * reached it, `http://localhost:80` under inject), and on the store without one.
 */
export const operatorUnauthorizedDetail = (adminUrl = 'http://localhost:80') =>
  'A valid operator key is required: Authorization: Bearer <key>. While the gateway runs, an operator with a key creates yours: ' +
  `\`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${adminUrl} operator-key create --name <name>\`; ` +
  'with no operator key yet, `npx cardline operator-key create --name <name>` on the store (the embedded store only while the gateway is stopped).';
