// How a call ended, as its audit record says it: the audit step's rule for every listener and the CLI.

/** A business refusal is 'refused' in both dialects (409 problem, 400/404 envelope). */
export function outcomeOf(status: number, errorCode: string | null): string {
  if (errorCode === 'CL_BUSINESS') return 'refused';
  if (status < 202) return 'succeeded';
  if (status === 202) return 'pending';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 409) return 'refused';
  if (status < 500) return 'invalid';
  return 'failed';
}
