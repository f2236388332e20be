// Where a webhook may go (decision 0082): https to public addresses (a sandbox also loopback over http), or a
// host on the operator's allow-list. Checked when a channel is saved and again in each connection's own DNS
// lookup, so a name re-pointed at a private address afterwards (DNS rebinding) is refused when used.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Whom the URL is checked for: a sandbox tenant, and the operator's allow-list. */
export interface TargetPolicy {
  sandbox: boolean;
  allowHosts: readonly string[];
  /** What a refusal says may only target public addresses: `webhooks` unless said. */
  targets?: string;
}

/** A URL or an address the policy refuses: the reason is safe to show the tenant's Admin. */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

const v4Of = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * The IPv4 addresses an IPv6 address embeds (IPv4-compatible, -mapped, -translated, NAT64 64:ff9b::/96, 6to4,
 * Teredo), or null: each reaches the address it embeds, so it is judged by that address.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  const zero = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  if (zero(0, 6)) return [v4Of(p[6]!, p[7]!)];
  if (zero(0, 5) && p[5] === 0xffff) return [v4Of(p[6]!, p[7]!)];
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return [v4Of(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return [v4Of(p[6]!, p[7]!)];
  if (p[0] === 0x2002) return [v4Of(p[1]!, p[2]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [v4Of(p[2]!, p[3]!), v4Of(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  return null;
}

/** The kind of an address, and the embedded IPv4 address it was judged by (see embeddedIPv4). */
export interface AddressKind {
  /** 'public', or an ipaddr.js range name: loopback, private, linkLocal, uniqueLocal, … */
  range: string;
  embedded: string | null;
}

/**
 * Every ipaddr.js range but `unicast` is not the public internet; an embedded IPv4 address decides, and other
 * NAT64 prefixes stay `rfc6052` (their operator places them).
 */
function kindOf(address: string): AddressKind {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const own = v6.range();
    // :: and ::1 lie in ::/96 but are the IPv6 unspecified and loopback addresses themselves.
    if (own !== 'unspecified' && own !== 'loopback') {
      const inner = embeddedIPv4(v6);
      if (inner) {
        for (const v4 of inner) {
          const range = v4.range();
          if (range !== 'unicast') return { range, embedded: v4.toString() };
        }
        return { range: 'public', embedded: inner.map(String).join(', ') };
      }
    }
  }
  const range = parsed.range();
  return { range: range === 'unicast' ? 'public' : range, embedded: null };
}

/** The kind of an address: 'public', 'loopback', or another ipaddr.js range name (private, linkLocal, …). */
export const rangeOf = (address: string): string => kindOf(address).range;

export const isAllowListed = (host: string, policy: TargetPolicy): boolean => policy.allowHosts.includes(host.toLowerCase());

/** Why an address may not be connected to under the policy, or null when it may. */
export function addressRefusal(host: string, address: string, policy: TargetPolicy): string | null {
  if (isAllowListed(host, policy)) return null;
  const { range, embedded } = kindOf(address);
  if (range === 'public') return null;
  if (range === 'loopback' && policy.sandbox) return null;
  const via = embedded === null ? '' : ` (it embeds ${embedded})`;
  return `${host} resolves to ${address}, a ${range} address${via}; ${policy.targets ?? 'webhooks'} may only target public addresses`;
}

/** The URL's host as DNS and the allow-list know it: lower case, IPv6 without brackets. */
export const hostOf = (url: URL): string => url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');

/** Checks a URL's form: scheme, credentials, host. Throws TargetRefused with the reason. */
export function checkUrlForm(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('url is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('url must be an https URL');
  if (url.username || url.password) throw new TargetRefused('url must not hold credentials');
  if (url.hash) throw new TargetRefused('url must not hold a fragment');
  const host = hostOf(url);
  if (url.protocol === 'http:' && !isAllowListed(host, policy)) {
    const loopbackName = host === 'localhost' || host.endsWith('.localhost');
    const loopbackAddress = isIP(host) !== 0 && rangeOf(host) === 'loopback';
    if (!policy.sandbox) throw new TargetRefused('url must be an https URL (only a sandbox tenant may target loopback over http)');
    if (!loopbackName && !loopbackAddress) throw new TargetRefused('url must be an https URL (a sandbox tenant may use http to loopback only)');
  }
  return url;
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Checks a URL as a channel is saved (its form, then every resolved address); throws TargetRefused with why. */
export async function checkTarget(raw: string, policy: TargetPolicy, resolve: Resolver = systemResolver): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  await checkAddresses(hostOf(url), policy, resolve);
  return url;
}

/** Checks every address a host (a name or an address) resolves to. Throws TargetRefused with the reason. */
export async function checkAddresses(host: string, policy: TargetPolicy, resolve: Resolver = systemResolver): Promise<void> {
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host).catch(() => {
    throw new TargetRefused(`${host} does not resolve`);
  });
  if (addresses.length === 0) throw new TargetRefused(`${host} does not resolve`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(host, address, policy);
    if (refusal) throw new TargetRefused(refusal);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A net/tls `lookup` that refuses when any resolved address is refused and connects to the checked one. */
export function checkedLookup(policy: TargetPolicy, resolve: Resolver = systemResolver) {
  return (hostname: string, options: { all?: boolean } | number | undefined, callback: LookupCallback): void => {
    const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    resolve(host).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' }), '');
        for (const { address } of addresses) {
          const refusal = addressRefusal(host, address, policy);
          if (refusal) return callback(Object.assign(new TargetRefused(refusal), { code: 'ECONNREFUSED' }), '');
        }
        const all = typeof options === 'object' && options?.all;
        if (all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
