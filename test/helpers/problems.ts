// Problem records (spec 2.8) as tests expect them whole: a business refusal and a validation failure.
import { PROBLEM_BASE } from './app.js';

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
