// A client's public key (EC P-256): its RFC 7638 thumbprint and whether it is a point on the curve.
import { createHash, createPublicKey } from 'node:crypto';

/** RFC 7638 thumbprint of an EC public key (SHA-256, base64url): the kid when the client sent none. */
export function ecThumbprint(jwk: { crv: string; x: string; y: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: 'EC', x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}

/** True when the coordinates name a point on P-256 (Node refuses any other point on import). */
export function isOnCurve(jwk: { crv: string; x: string; y: string }): boolean {
  try {
    createPublicKey({ key: { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}
