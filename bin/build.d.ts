// Types of bin/build.js for the TypeScript that imports it (the tests).
export declare const ROOT: string;
export declare function hasSources(root?: string): boolean;
export declare function staleReason(root?: string): string | null;
export declare class BuildError extends Error {}
export declare function build(opts?: { ifStale?: boolean; say?: (line: string) => void; root?: string; generate?: boolean }): Promise<boolean>;
export declare function ensureBuilt(): Promise<void>;
