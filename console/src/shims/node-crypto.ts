// The one export of node:crypto the SDK's sources use, from the browser's Web Crypto (bin/build-console.js
// bundles this module in its place).
export const randomUUID = (): string => crypto.randomUUID();
