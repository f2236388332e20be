// The API guide's event catalogue (docs/api.md, "Events of record") lists every type a channel can receive, the
// test event `channel.test` included, and shows one example payload of each, valid against its closed schema
// (schemas/events.ts), so the examples a receiver reads are what a channel really carries.
import { readFileSync } from 'node:fs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TEST_EVENT, ChannelTestPayload, EVENT_PAYLOADS, EVENT_TYPES } from '../../schemas/events.js';

describe('docs/api.md event examples', () => {
  it('one example per event type, each valid', () => {
    const readme = readFileSync('docs/api.md', 'utf8');
    const block = /<!-- event-examples -->\n```json\n([\s\S]*?)\n```/.exec(readme);
    expect(block).not.toBeNull();
    const examples = JSON.parse(block![1]!) as Record<string, unknown>;
    expect(Object.keys(examples)).toEqual([...EVENT_TYPES, CHANNEL_TEST_EVENT]);
    const schemas = { ...EVENT_PAYLOADS, [CHANNEL_TEST_EVENT]: ChannelTestPayload };
    for (const type of Object.keys(schemas) as (keyof typeof schemas)[]) {
      const checker = TypeCompiler.Compile(schemas[type]);
      expect(checker.Check(examples[type]), `${type}: ${JSON.stringify([...checker.Errors(examples[type])][0])}`).toBe(true);
    }
  });

  it('the catalogue has a row for every type, channel.test included', () => {
    const guide = readFileSync('docs/api.md', 'utf8');
    const section = guide.slice(guide.indexOf('## Events of record'), guide.indexOf('<!-- event-examples -->'));
    const named = new Set([...section.matchAll(/^\| (`[^|]+`) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!)));
    for (const type of [...EVENT_TYPES, CHANNEL_TEST_EVENT]) expect(named, type).toContain(type);
  });
});
