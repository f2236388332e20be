// PIN changes through the tenant's HSM: which keys a block is translated between (the tenant's pin
// configuration), and the translation itself, with every HSM or block failure mapped to the one answer
// a caller may see. The clear PIN exists only inside the HSM's translate call.
import type { FastifyBaseLogger } from 'fastify';
import type { SetPinInput } from '../../../connectors/contract.js';
import type { TenantPinConfig } from '../../../schemas/pin.js';
import { HsmError, type HsmProvider } from '../../crypto/hsm/index.js';
import { PinBlockError, type PinBlockFormat } from '../../crypto/pin-block.js';
import { Errors } from '../../errors.js';
import type { Tenant } from '../tenancy/tenants.js';

/** One answer to every block failing after decryption: telling them apart would make the route an oracle. */
export const INVALID_PIN_BLOCK = "The PIN block is not valid for this card under the tenant's PIN key and the given format.";

/** A block as the caller sent it: hex under the tenant's PIN key (or `keyId`, another of its keys). */
export interface ClientPinBlock {
  pinBlock: string;
  format: PinBlockFormat;
  keyId?: string | undefined;
}

/** Where one block goes: from the caller's key to the core's, in the core's format. */
export interface PinRoute {
  tenantId: string;
  fromKeyId: string;
  pin: TenantPinConfig;
}

export class PinService {
  /** Null: this gateway has no HSM (PIN translation answers 503). */
  constructor(private readonly hsm: HsmProvider | null) {}

  /** A tenant's block translation; refused first without PIN keys, without an HSM, or for the core's `keyId`. */
  route(tenant: Tenant, keyId: string | undefined): PinRoute {
    const pin = tenant.config.pin;
    if (!pin) {
      throw Errors.business(
        'PIN_NOT_CONFIGURED',
        `Tenant '${tenant.id}' has no PIN keys configured; the gateway operator must set its pin section (tenantKeyId, coreKeyId, coreFormat) before PINs can be set.`,
      );
    }
    if (!this.hsm) throw Errors.unavailable('PIN translation is not available on this gateway.');
    if (keyId !== undefined && keyId === pin.coreKeyId) {
      throw Errors.badRequest("keyId names the core's PIN key; send the block under one of the tenant's PIN keys.");
    }
    return { tenantId: tenant.id, fromKeyId: keyId ?? pin.tenantKeyId, pin };
  }

  /** The block under the core's PIN key, ready for the connector; the caller's mistakes are 400s, the HSM's 503s. */
  async translate(route: PinRoute, block: ClientPinBlock, pan: string, log: FastifyBaseLogger): Promise<Omit<SetPinInput, 'cardId'>> {
    const { tenantId, fromKeyId, pin } = route;
    try {
      const hsm = this.hsm;
      if (!hsm) throw Errors.unavailable('PIN translation is not available on this gateway.');
      return await hsm.forTenant(tenantId).translatePinBlock({
        pinBlock: block.pinBlock,
        format: block.format,
        pan,
        fromKeyId,
        toKeyId: pin.coreKeyId,
        toFormat: pin.coreFormat,
      });
    } catch (err) {
      if (err instanceof PinBlockError) {
        if (err.reason === 'pan') {
          log.error('the core returned a card number a PIN block cannot be bound to');
          throw Errors.internal();
        }
        // The reason helps an operator; the caller gets one answer whatever it is.
        log.info({ reason: err.reason }, 'PIN block refused');
        throw Errors.badRequest(INVALID_PIN_BLOCK);
      }
      if (err instanceof HsmError && err.keyId === fromKeyId && fromKeyId !== pin.tenantKeyId && err.reason === 'unknown-key') {
        throw Errors.badRequest(`The tenant has no PIN key '${fromKeyId}'.`);
      }
      if (err instanceof HsmError && err.keyId === fromKeyId && err.reason === 'key-type') {
        throw Errors.badRequest(`${err.message}; send a block of a format that key serves, or name another key with keyId.`);
      }
      if (err instanceof HsmError) {
        log.error({ reason: err.reason, keyId: err.keyId, detail: err.message }, 'PIN translation failed');
        throw Errors.unavailable(
          `PIN translation for tenant '${tenantId}' is not available: its PIN key configuration or HSM needs attention from the gateway operator.`,
        );
      }
      throw err;
    }
  }
}
