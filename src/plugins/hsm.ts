// The tenants' HSM (software for development, PKCS#11 in production), chosen from the environment at boot.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { HsmError, type HsmProvider } from '../crypto/hsm/index.js';
import { SoftwareHsmProvider } from '../crypto/hsm/software.js';
import { MasterKey } from '../crypto/master-key.js';

declare module './services.js' {
  interface Services {
    /** PIN keys and PIN block translation; one `Hsm` per tenant (`hsm.forTenant(id)`). */
    hsm?: HsmProvider;
  }
}

export type HsmSettings =
  | { kind: 'software' }
  | { kind: 'pkcs11'; library: string; tokenLabel: string; pin: string };

/**
 * CARDLINE_HSM: `software` (default: keys sealed in the store under the master key) or `pkcs11`, which
 * needs CARDLINE_PKCS11_LIBRARY, CARDLINE_PKCS11_TOKEN_LABEL and CARDLINE_PKCS11_PIN. Errors name the variable.
 */
export function hsmSettingsFromEnv(env: NodeJS.ProcessEnv): HsmSettings {
  const kind = env.CARDLINE_HSM || 'software';
  if (kind === 'software') return { kind };
  if (kind !== 'pkcs11') throw new Error(`CARDLINE_HSM must be 'software' or 'pkcs11', not '${kind}'`);
  const missing = ['CARDLINE_PKCS11_LIBRARY', 'CARDLINE_PKCS11_TOKEN_LABEL', 'CARDLINE_PKCS11_PIN'].filter((v) => !env[v]);
  if (missing.length) throw new Error(`CARDLINE_HSM=pkcs11 needs ${missing.join(', ')}`);
  return { kind, library: env.CARDLINE_PKCS11_LIBRARY!, tokenLabel: env.CARDLINE_PKCS11_TOKEN_LABEL!, pin: env.CARDLINE_PKCS11_PIN! };
}

export interface HsmPluginOptions {
  masterKey: string;
  /** Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

const hsmPlugin: FastifyPluginAsync<HsmPluginOptions> = async (app, opts) => {
  const settings = hsmSettingsFromEnv(opts.env ?? process.env);
  let provider: HsmProvider;
  if (settings.kind === 'software') {
    provider = new SoftwareHsmProvider({ db: app.cardline.db, masterKey: new MasterKey(opts.masterKey) });
  } else {
    // Loaded only when asked for: the native addon is an optional dependency.
    const { Pkcs11HsmProvider } = await import('../crypto/hsm/pkcs11.js');
    try {
      provider = await Pkcs11HsmProvider.open(settings);
    } catch (err) {
      // Fail fast at boot, with what to fix and never the PIN.
      throw new Error(`PIN HSM: ${err instanceof HsmError ? err.message : String(err)}`);
    }
  }
  app.cardline.hsm = provider;
  app.log.info({ hsm: provider.kind }, 'PIN HSM ready');
  app.addHook('onClose', async () => provider.close());
};

export default fp(hsmPlugin, { name: 'hsm', dependencies: ['services'] });
