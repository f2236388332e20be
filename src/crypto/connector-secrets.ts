// The secrets a tenant's connector seals its data at rest with: a key derived from the master key per
// tenant, so a connector (a plugin, possibly) can open neither the gateway's keys nor another tenant's data.
import type { ConnectorSecrets } from '../../connectors/contract.js';
import { MasterKey } from './master-key.js';

export function connectorSecrets(masterKey: MasterKey, tenantId: string): ConnectorSecrets {
  const key = masterKey.derive(`connector-secrets:v1:${tenantId}`);
  return {
    seal: (plaintext, context) => key.seal(plaintext, context),
    open: (sealed, context) => key.open(sealed, context),
  };
}
