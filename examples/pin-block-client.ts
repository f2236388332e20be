// What a bank's channel does before PUT /v1/cards/{cardId}/pin: builds an ISO 9564-1 PIN block for a PIN
// and a card number and enciphers it under the PIN key it shares with the gateway, with the SDK's
// `buildPinBlock` (sdk/src/pin-block.ts: only node:crypto, so it can also be copied into a client as it is).
//
//   npx tsx examples/pin-block-client.ts --pin 1234 --pan 4000000000030017 --key C1D0F8FB4958670DBA40AB1F3752EF0D
//   npx tsx examples/pin-block-client.ts --format 0 --pin 1234 --pan 4000000000030017 --key 042666B49184CF5C68DE9628D0397B36
//
// Prints the block in hex. Format 4 (the default) takes an AES key (16 or 32 bytes); formats 0 and 3 a
// 2-key triple-DES key (16 bytes). Send it with `cl.card.setPin(cardId, { pinBlock, format })`.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildPinBlock } from '@cardline/sdk';

export { buildPinBlock };

// Run as a script, also through a symlinked directory (the module's URL is its real path, argv[1] is not).
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { pin: { type: 'string' }, pan: { type: 'string' }, key: { type: 'string' }, format: { type: 'string', default: '4' } },
  });
  const format = Number(values.format);
  if (!values.pin || !values.pan || !values.key || ![0, 3, 4].includes(format)) {
    console.error('usage: npx tsx examples/pin-block-client.ts --pin <digits> --pan <card number> --key <hex> [--format 0|3|4]');
    process.exit(2);
  }
  try {
    console.log(buildPinBlock({ pin: values.pin, pan: values.pan, keyHex: values.key, format: format as 0 | 3 | 4 }));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
}
