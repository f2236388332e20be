// The gateway's API at a glance: every business operation, one declaration each (decision 0031). The
// registrar (register.ts) turns this table into routes; the OpenAPI document and the role table come from it.
import { adminKeyOperations } from './admin-keys.js';
import { adminUserOperations } from './admin-users.js';
import { auditOperations } from './audit.js';
import { channelOperations } from './channels.js';
import { authOperations } from './auth.js';
import { cardOperations } from './cards.js';
import { creditLineOperations } from './credit-line.js';
import { coreRoutingOperations } from './core-routing.js';
import type { Operation } from './define.js';
import { entityOperations } from './entities.js';
import { pinOperations } from './pin.js';
import { reportOperations } from './reports.js';
import { transactionOperations } from './transactions.js';
import { sandboxOperations } from './sandbox.js';

export const operations: readonly Operation[] = [
  ...authOperations,
  ...creditLineOperations,
  ...cardOperations,
  ...entityOperations,
  ...transactionOperations,
  ...reportOperations,
  ...pinOperations,
  ...sandboxOperations,
  ...auditOperations,
  ...adminKeyOperations,
  ...adminUserOperations,
  ...channelOperations,
  ...coreRoutingOperations,
];
