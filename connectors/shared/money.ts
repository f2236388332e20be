// Decimal-string money ⇄ integer minor units, without floats.

const MONEY = /^(\d{1,15})(?:\.(\d{1,2}))?$/;

export function toMinor(amount: string): bigint {
  const m = MONEY.exec(amount);
  if (!m) throw new RangeError(`Not a decimal amount: ${amount}`);
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

export function fromMinor(minor: bigint): string {
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}
