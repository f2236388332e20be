// Types of bin/build-console.js for the TypeScript that imports it (the tests).
export declare const ROOT: string;
export declare const OUT: string;
export declare function buildConsole(outdir?: string): Promise<string>;
