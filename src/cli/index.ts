// Entry of `npx cardline` (bin/cardline.js loads this file through tsx). See program.ts.
import { run } from './program.js';

process.exitCode = await run(process.argv);
