#!/usr/bin/env node
// `npm start` and `npm run demo`: the compiled gateway, dist/src/server.js, in this process, after the same
// freshness check as the CLI (bin/build.js, decision 0100). Arguments pass through (`--demo`).
import { URL } from 'node:url';
import { requireNode } from './node-version.js';

// Before the rest is loaded: on an older Node that could fail with a reason that does not name the version.
requireNode();
const { ensureBuilt } = await import('./build.js');
await ensureBuilt();
await import(new URL('../dist/src/server.js', import.meta.url).href);
