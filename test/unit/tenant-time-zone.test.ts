// A tenant's home country and time zone: defaults filled when the configuration is parsed, the zone
// checked against the IANA names Intl knows, errors naming the field.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TENANT_CONFIG } from '../../schemas/tenant.js';
import { TenantConfigError, parseTenantConfig } from '../../src/services/tenancy/tenants.js';

describe('homeCountry and timeZone', () => {
  it('default to PT and UTC', () => {
    const config = parseTenantConfig('acme', DEFAULT_TENANT_CONFIG);
    expect([config.homeCountry, config.timeZone]).toEqual(['PT', 'UTC']);
  });

  it('keep what the tenant sets', () => {
    const config = parseTenantConfig('acme', { ...DEFAULT_TENANT_CONFIG, homeCountry: 'IN', timeZone: 'Asia/Kolkata' });
    expect([config.homeCountry, config.timeZone]).toEqual(['IN', 'Asia/Kolkata']);
  });

  it.each([
    [{ timeZone: 'Mars/Base' }, "/timeZone: 'Mars/Base' is not an IANA time zone (such as UTC or Europe/Lisbon)"],
    [{ homeCountry: 'prt' }, '/homeCountry: Expected string to match'],
  ])('refuses %j, naming the field', (patch, message) => {
    let error: unknown;
    try {
      parseTenantConfig('acme', { ...DEFAULT_TENANT_CONFIG, ...patch });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TenantConfigError);
    expect((error as Error).message).toContain(message);
  });
});
