// The stored form of an authorization's trail (decision 0404): rule evaluations as strings, read back exactly.
import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../schemas/authorizations.js';
import { decidedTrail, storedTrail } from '../../src/store/authorization-trail.js';

const A = '01a22634-597b-7b99-ab02-6e8e70cf30ac';
const B = '01a22634-5c27-710f-807b-08a8dc160196';

describe('storedTrail / decidedTrail', () => {
  it('keeps every evaluation as decided, compact only where the form holds all of it', () => {
    const trail: StepRecord[] = [
      { step: 'card-state', outcome: 'approved' },
      {
        step: 'spend-controls',
        outcome: 'declined',
        declineReason: 'VELOCITY_COUNT_EXCEEDED',
        ruleId: B,
        detail: "declined by rule 'x' (version 3)",
        rules: [
          { ruleId: A, version: 12, mode: 'active', outcome: 'approved' },
          { ruleId: A, version: 13, mode: 'shadow', outcome: 'approved' },
          { ruleId: B, version: 3, mode: 'active', outcome: 'declined', declineReason: 'VELOCITY_COUNT_EXCEEDED' },
          { ruleId: B, version: 4, mode: 'shadow', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' },
        ],
      },
      { step: 'decision-endpoint', outcome: 'skipped', detail: 'no decision endpoint' },
    ];
    const stored = storedTrail(trail);
    expect(stored[1]!.rules).toEqual([`${A}:12`, `${A}:13:shadow:approved`, `${B}:3:active:declined:VELOCITY_COUNT_EXCEEDED`, `${B}:4:shadow:declined:SPEND_CONTROL_DECLINED`]);
    expect(decidedTrail(JSON.parse(JSON.stringify(stored)))).toEqual(trail);
    // A field the form does not know keeps the evaluation an object, read back as it is.
    const other = [{ step: 'spend-controls', outcome: 'approved', rules: [{ ruleId: A, version: 1, mode: 'active', outcome: 'approved', note: 'x' }] }] as unknown as StepRecord[];
    expect(storedTrail(other)).toEqual(other);
    expect(decidedTrail(storedTrail(other))).toEqual(other);
  });

  it('a frozen evaluation shared by many trails (decision 0417) is stored as an unshared one would be, every time', () => {
    const approved = Object.freeze({ ruleId: A, version: 2, mode: 'active' as const, outcome: 'approved' as const });
    const shadow = Object.freeze({ ruleId: B, version: 5, mode: 'shadow' as const, outcome: 'approved' as const });
    const trail = (rules: StepRecord['rules']): StepRecord[] => [{ step: 'spend-controls', outcome: 'approved', rules }];
    const shared = trail([approved, shadow, approved]);
    const own = trail([{ ...approved }, { ...shadow }, { ...approved }]);
    expect(storedTrail(shared)).toEqual(storedTrail(own));
    expect(storedTrail(shared)).toEqual([{ step: 'spend-controls', outcome: 'approved', rules: [`${A}:2`, `${B}:5:shadow:approved`, `${A}:2`] }]);
    expect(decidedTrail(storedTrail(shared))).toEqual(own);
    // Shared objects cannot be changed by whoever holds a trail (ES modules are strict: a write throws).
    expect(() => Object.assign(shared[0]!.rules![0]!, { outcome: 'declined' })).toThrow(TypeError);
  });
});
