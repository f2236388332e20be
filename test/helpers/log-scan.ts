// Scans captured log output for secrets: card numbers, JOSE strings, bearer headers, known passwords.

/** Luhn check of a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Luhn-valid card numbers: maximal runs of 13-19 contiguous digits, and the printed form in groups of
 * four (4111 1111 1111 1111, 4111-1111-1111-1111). UUIDs and hex hashes never hold such a run.
 */
export function findPans(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?<!\d)\d{13,19}(?!\d)/g)) if (luhnValid(m[0])) found.push(m[0]);
  for (const m of text.matchAll(/(?<![\w-])\d{4}(?:[ -]\d{4}){2}[ -]\d{1,7}(?![\w-])/g)) {
    const digits = m[0].replace(/\D/g, '');
    if (digits.length >= 13 && luhnValid(digits)) found.push(digits);
  }
  return found;
}

/** Pino's epoch-millisecond `time` is a 13-digit number that is not a card number; it is left out. */
const withoutTimestamps = (text: string): string => text.replace(/"time":\d+/g, '"time":0');

export interface SecretFinding {
  kind: 'pan' | 'jose' | 'bearer' | 'secret';
  match: string;
  line: string;
}

/** Every finding in the text; `secrets` are literal values (passwords) that must not appear at all. */
export function scanForSecrets(text: string, secrets: string[] = []): SecretFinding[] {
  const findings: SecretFinding[] = [];
  for (const line of withoutTimestamps(text).split('\n')) {
    for (const pan of findPans(line)) findings.push({ kind: 'pan', match: pan, line });
    if (line.includes('eyJ')) findings.push({ kind: 'jose', match: 'eyJ', line });
    if (line.includes('Bearer')) findings.push({ kind: 'bearer', match: 'Bearer', line });
    for (const s of secrets) if (s && line.includes(s)) findings.push({ kind: 'secret', match: s, line });
  }
  return findings;
}
