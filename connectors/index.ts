// The one registry of built-in connectors: adding a connector is one folder and one line here.
import type { ConnectorDefinition } from './contract.js';
import mock from './mock/index.js';
import file from './file/index.js';
import rest from './rest/index.js';

export const builtInConnectors: ConnectorDefinition[] = [
  mock,
  file,
  rest,
];
