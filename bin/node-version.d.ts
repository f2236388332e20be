// Types of bin/node-version.js for the TypeScript that imports it (the tests).
export declare const REQUIRED_NODE: string;
export declare function nodeVersionProblem(running?: string, required?: string): string | null;
export declare function requireNode(): void;
