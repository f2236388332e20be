// The API guide's event catalogue (docs/api.md, "Events of record") shows one example payload of every event type, each valid against its closed
// schema (schemas/events.ts), so the examples a receiver reads are what a channel really carries.
import { readFileSync } from 'node:fs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { EVENT_PAYLOADS, EVENT_TYPES } from '../../schemas/events.js';

describe('docs/api.md event examples', () => {
  it('one example per event type, each valid', () => {
    const readme = readFileSync('docs/api.md', 'utf8');
    const block = /<!-- event-examples -->\n```json\n([\s\S]*?)\n```/.exec(readme);
    expect(block).not.toBeNull();
    const examples = JSON.parse(block![1]!) as Record<string, unknown>;
    expect(Object.keys(examples)).toEqual(EVENT_TYPES);
    for (const type of EVENT_TYPES) {
      const checker = TypeCompiler.Compile(EVENT_PAYLOADS[type]);
      expect(checker.Check(examples[type]), `${type}: ${JSON.stringify([...checker.Errors(examples[type])][0])}`).toBe(true);
    }
  });
});
