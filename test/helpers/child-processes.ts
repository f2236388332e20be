// Vitest setup file: the Node processes a test starts (gateways, the CLI, scripts) preload test/helpers/liftoff.js
// through NODE_OPTIONS, which they inherit; the test worker itself, started before, is unchanged (decision 0385).
const preload = `--import=${new URL('./liftoff.js', import.meta.url).href}`;
const options = process.env.NODE_OPTIONS ?? '';
if (!options.includes(preload)) process.env.NODE_OPTIONS = `${options} ${preload}`.trim();
