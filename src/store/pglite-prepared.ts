// Named statements on PGlite prepared once per store, each run one call into PostgreSQL (decision 0425).
import { protocol, types, type PGlite } from '@electric-sql/pglite';

/** The names prepared on each store, with the text each was prepared from. */
const preparedOn = new WeakMap<PGlite, Map<string, string>>();

/** Parameters whose text form is String(value) (what PGlite's query() sends for them); null when one is not. */
function asText(params: unknown[]): (string | null)[] | null {
  const out: (string | null)[] = [];
  for (const p of params) {
    if (p === null || p === undefined) out.push(null);
    else if (typeof p === 'string') out.push(p);
    else if (typeof p === 'number' && Number.isFinite(p)) out.push(String(p));
    else return null;
  }
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

interface Message {
  name: string;
  fields?: ({ name: string; dataTypeID: number } | string | null)[];
  text?: string;
}

const COUNTED_BY_QUERY = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE']);

/**
 * Runs a statement under its name, prepared on first use, outside any transaction; the same answer as query().
 * Null when it cannot (a parameter without a plain text form, the name taken by another text): then query().
 */
export async function namedQuery(db: PGlite, name: string, sql: string, params: unknown[]): Promise<{ rows: unknown[]; rowCount: number } | null> {
  const values = asText(params);
  let prepared = preparedOn.get(db);
  if (!prepared) preparedOn.set(db, (prepared = new Map()));
  if (!values) return null;
  const run = [protocol.serialize.bind({ statement: name, values }), protocol.serialize.describe({ type: 'P' }), protocol.serialize.execute({}), protocol.serialize.sync()];
  // Whether to prepare is decided under PGlite's locks: runs queued behind the first must not prepare again.
  const answer = await db._runExclusiveTransaction(() =>
    db._runExclusiveQuery(async () => {
      const known = prepared.get(name);
      if (known !== undefined && known !== sql) return null;
      const { messages } = await db.execProtocol(concat(known === undefined ? [protocol.serialize.parse({ name, text: sql }), ...run] : run), { throwOnError: false });
      const out = messages as unknown as Message[];
      if (out.some((m) => m.name === 'parseComplete')) prepared.set(name, sql);
      return out;
    }),
  );
  if (!answer) return null;
  const error = answer.find((m) => m.name === 'error');
  if (error) throw error;
  let columns: { name: string; dataTypeID: number }[] = [];
  const rows: unknown[] = [];
  let rowCount = 0;
  for (const m of answer) {
    if (m.name === 'rowDescription') columns = m.fields as { name: string; dataTypeID: number }[];
    else if (m.name === 'dataRow') {
      const row: Record<string, unknown> = {};
      (m.fields as (string | null)[]).forEach((v, i) => (row[columns[i]!.name] = types.parseType(v, columns[i]!.dataTypeID, db.parsers)));
      rows.push(row);
    } else if (m.name === 'commandComplete') {
      const words = m.text!.split(' ');
      if (COUNTED_BY_QUERY.has(words[0]!)) rowCount += Number.parseInt(words[words.length - 1]!, 10);
    }
  }
  return { rows, rowCount };
}
