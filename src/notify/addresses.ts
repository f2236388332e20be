// Where a webhook may go (decision 0082). A production tenant targets https URLs whose every resolved address
// is public; a sandbox tenant may also target loopback over http; the operator's allow-list
// (CARDLINE_WEBHOOK_ALLOW_HOSTS) admits named hosts whatever they resolve to. The check runs when a channel is
// saved and again on every connection, in the connection's own DNS lookup, so that a name re-pointed at a
// private address after the check (DNS rebinding) is refused at the moment it would be used.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Whom the URL is checked for: a sandbox tenant, and the operator's allow-list. */
export interface TargetPolicy {
  sandbox: boolean;
  allowHosts: readonly string[];
}

/** A URL or an address the policy refuses: the reason is safe to show the tenant's Admin. */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** ipaddr.js range names that are anything but the public internet. */
const NOT_PUBLIC = new Set([
  'unspecified',
  'broadcast',
  'multicast',
  'linkLocal',
  'loopback',
  'carrierGradeNat',
  'private',
  'reserved',
  'uniqueLocal',
  'ipv4Mapped',
  'rfc6145',
  'rfc6052',
  '6to4',
  'teredo',
  'benchmarking',
  'amt',
  'as112',
  'as112v6',
  'deprecated',
  'orchid2',
  'droneRemoteIdProtocolEntityTags',
  'discard',
]);

/** The kind of an address: 'public', 'loopback', or another ipaddr.js range name (private, linkLocal, …). */
export function rangeOf(address: string): string {
  let parsed = ipaddr.parse(address);
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is the IPv4 address it maps.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === 'unicast' && !NOT_PUBLIC.has(range) ? 'public' : range;
}

const isAllowListed = (host: string, policy: TargetPolicy): boolean => policy.allowHosts.includes(host.toLowerCase());

/** Why an address may not be connected to under the policy, or null when it may. */
export function addressRefusal(host: string, address: string, policy: TargetPolicy): string | null {
  if (isAllowListed(host, policy)) return null;
  const range = rangeOf(address);
  if (range === 'public') return null;
  if (range === 'loopback' && policy.sandbox) return null;
  return `${host} resolves to ${address}, a ${range} address; webhooks may only target public addresses`;
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

/**
 * Checks a URL as a channel is saved: its form, then every address its host resolves to. Throws
 * TargetRefused with the reason (the first refused address, or a name that does not resolve).
 */
export async function checkTarget(raw: string, policy: TargetPolicy, resolve: Resolver = systemResolver): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  const host = hostOf(url);
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host).catch(() => {
    throw new TargetRefused(`${host} does not resolve`);
  });
  if (addresses.length === 0) throw new TargetRefused(`${host} does not resolve`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(host, address, policy);
    if (refusal) throw new TargetRefused(refusal);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls connections that resolves the host, refuses the connection when any address is
 * refused by the policy, and connects to the checked address (never to a second answer of the resolver).
 */
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
