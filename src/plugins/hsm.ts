// The tenants' HSM (software for development, PKCS#11 in production), chosen by configuration at boot.
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

interface HsmPluginOptions {
  masterKey: string;
}

const hsmPlugin: FastifyPluginAsync<HsmPluginOptions> = async (app, opts) => {
  const settings = app.cardline.config.hsm;
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
