// Card numbers: the Luhn check, masking (first six, last four) and finding card-number-shaped digit runs
// in free text. One place, used by the gateway's logs, audit records and responses, and by the cores.

/** The Luhn check every real card number passes (12-19 digits). */
export function luhnValid(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1 && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** Masks the digits between the first six and last four (`400000******0017`); idempotent. */
export function maskPan(value: string): string {
  if (value.length <= 10) return value.slice(0, -4).replace(/\d/g, '*') + value.slice(-4);
  return value.slice(0, 6) + value.slice(6, -4).replace(/\d/g, '*') + value.slice(-4);
}

/** 13-19 digits, maybe grouped by single spaces or dashes, not inside a longer run; letters around do not hide it. */
const DIGIT_RUN = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;

/** A UUID: where its digit groups join into a 13-19 digit run, that run is Luhn-valid one time in ten. */
const UUID_OR_DIGIT_RUN = new RegExp(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|${DIGIT_RUN.source}`, 'gi');

/**
 * Masks card-number runs in text; `luhnOnly` keeps ids readable: those with long non-Luhn numbers, and UUIDs
 * (a key id, an approval id), which are ids whatever their digits add up to.
 */
export function maskCardNumbers(text: string, { luhnOnly }: { luhnOnly: boolean }): string {
  if (!luhnOnly) return text.replace(DIGIT_RUN, (run) => maskPan(run.replace(/\D/g, '')));
  return text.replace(UUID_OR_DIGIT_RUN, (run, uuid: string | undefined) => {
    if (uuid) return run;
    const digits = run.replace(/\D/g, '');
    return luhnValid(digits) ? maskPan(digits) : run;
  });
}
