#!/usr/bin/env node
// `npx cardline …`: runs the TypeScript CLI (src/cli/index.ts) in this process through tsx's ESM
// loader (a runtime dependency), so stdin, signals and the exit code need no forwarding.
import { URL, fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import(new URL('../src/cli/index.ts', import.meta.url).href);
