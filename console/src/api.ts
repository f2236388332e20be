// Calls to the management API with the session cookie (the browser sends it; the page never sees it) and,
// on every change, the session's CSRF token, held in memory only. Errors carry what the API said.

interface FieldError {
  field: string;
  message: string;
  objectName?: string;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly fieldErrors: FieldError[] = [],
  ) {
    super(detail);
  }
}

export interface Page<T> {
  result: T[];
  pagination: { nextCursor?: string | null; next?: string | null } | null;
}

let csrf = '';
let onSignedOut: (message: string) => void = () => undefined;

export const session = {
  set(token: string): void {
    csrf = token;
  },
  clear(): void {
    csrf = '';
  },
  onSignedOut(handler: (message: string) => void): void {
    onSignedOut = handler;
  },
};

/** The message a person reads: what went wrong (the API's detail) and, for a form, which field. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) {
    const fields = err.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ');
    return fields && !err.detail.includes(fields) ? `${err.detail} (${fields})` : err.detail;
  }
  if (err instanceof TypeError) return 'The gateway did not answer: check that it is running and reachable, then try again.';
  return String((err as Error)?.message ?? err);
}

export async function api<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown, opts: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') {
    headers['x-csrf-token'] = csrf;
    headers['idempotency-key'] = crypto.randomUUID();
  }
  const res = await fetch(url, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const type = res.headers.get('content-type') ?? '';
  const data = type.includes('json') ? await res.json() : null;
  if (!res.ok) {
    const detail = typeof data?.detail === 'string' ? data.detail : `The gateway answered ${res.status}.`;
    const err = new ApiError(res.status, detail, Array.isArray(data?.fieldErrors) ? data.fieldErrors : []);
    if (res.status === 401 && !opts.quiet401) onSignedOut(detail);
    throw err;
  }
  return data as T;
}

export const enc = encodeURIComponent;
