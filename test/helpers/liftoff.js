// Preloaded into the Node processes the tests start (NODE_OPTIONS, set by test/helpers/child-processes.ts):
// WebAssembly compiled by V8's baseline compiler only, and JavaScript by its interpreter and baseline compiler
// only. A test's gateway or CLI lives seconds: compiling PGlite's PostgreSQL a second time for the optimizing
// tier cost it a quarter of its CPU (decision 0385), optimizing its JavaScript a fifth (decision 0410).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--liftoff-only');
setFlagsFromString('--no-opt');
