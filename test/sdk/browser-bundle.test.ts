// The SDK bundles for a browser (issue 27, point 17): esbuild, platform `browser`, finds no `node:` import (or Node
// builtin) anywhere in the SDK or its dependencies, and the bundle runs in a context holding only the Web
// platform's globals (no process, Buffer or require): a PIN block in both ciphers, a JWE, a webhook verified.
import { readFileSync } from 'node:fs';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import { exportJWK, generateKeyPair, compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';

interface Vector {
  pin: string;
  pan: string;
  keyHex: string;
  encryptedBlockHex: string;
}

const ENTRY = new URL('../../sdk/src/index.ts', import.meta.url).pathname;

describe('the SDK bundled for the browser', () => {
  it('has no node: import, and runs with only the Web platform globals', async () => {
    const result = await build({ entryPoints: [ENTRY], bundle: true, platform: 'browser', format: 'iife', globalName: 'CardlineSDK', write: false, metafile: true, logLevel: 'silent' });
    expect(result.errors).toEqual([]);
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
    expect(imports.filter((path) => path.startsWith('node:') || /^(crypto|buffer|fs|path|http|https|net|stream|util)$/.test(path))).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('node_modules/des.js/'))).toBe(true);

    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const web = {
      crypto: globalThis.crypto,
      CryptoKey: (globalThis as unknown as { CryptoKey: unknown }).CryptoKey,
      // The context's own classes (its Uint8Array is not this realm's), over this realm's codecs.
      encodeUtf8: (text: string) => Array.from(encoder.encode(text)),
      decodeUtf8: (bytes: Uint8Array) => decoder.decode(bytes),
      URL,
      URLSearchParams,
      AbortController,
      setTimeout,
      clearTimeout,
      performance,
      atob,
      btoa,
    };
    const context = createContext({ ...web });
    runInContext('globalThis.TextEncoder = class { encode(s) { return new Uint8Array(encodeUtf8(s)); } }; globalThis.TextDecoder = class { decode(b) { return decodeUtf8(b); } };', context);
    runInContext(result.outputFiles[0]!.text, context);
    const sdk = (context as { CardlineSDK: typeof import('../../sdk/src/index.js') }).CardlineSDK;
    expect(runInContext('typeof process + typeof Buffer + typeof require', context)).toBe('undefinedundefinedundefined');

    // The published vectors (as test/unit/pin-block.test.ts): triple-DES format 0, AES format 4.
    const [v0, v4] = (JSON.parse(readFileSync('test/fixtures/pin-blocks.json', 'utf8')) as { vectors: Vector[] }).vectors as [Vector, Vector];
    expect(await sdk.buildPinBlock({ pin: v0.pin, pan: v0.pan, keyHex: v0.keyHex, format: 0 })).toBe(v0.encryptedBlockHex);
    const fill = Array.from(Buffer.from('146C6601F4A8035C', 'hex'));
    const v4Block = await sdk.buildPinBlock({ pin: v4.pin, pan: v4.pan, keyHex: v4.keyHex, format: 4, random: (n) => runInContext(`new Uint8Array(${JSON.stringify(fill.slice(0, n))})`, context) as Uint8Array });
    expect(v4Block).toBe(v4.encryptedBlockHex);

    const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const jwe = await sdk.encryptTo({ ...(await exportJWK(publicKey)), kid: 'k1' }, 'secret text');
    expect(new TextDecoder().decode((await compactDecrypt(jwe, privateKey)).plaintext)).toBe('secret text');

    const secret = `whsec_${Buffer.from('a webhook secret of 32 bytes!!!!').toString('base64')}`;
    const body = JSON.stringify({ type: 'card.locked', data: {} });
    const headers = new Webhook(secret).sign('msg_1', new Date(), body);
    const signed = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': headers };
    expect(sdk.webhooks.verify(new TextEncoder().encode(body), signed, secret)).toBe(true);
    expect(sdk.webhooks.verify(body, { ...signed, 'webhook-id': 'msg_2' }, secret)).toBe(false);
  });
});
