#!/usr/bin/env node
// `npx cardline …` in a checkout: npm links this workspace's bin into node_modules/.bin, where npx finds it
// and runs it at once. Had the root package declared the bin itself, npx would load the whole dependency tree
// and link the project into its cache on every call (3-5 s on a busy machine; decision 0103).
import '../bin/cardline.js';
