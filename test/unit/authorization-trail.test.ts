// The stored form of an authorization's trail (decisions 0404, 0443): approving versions as one string, declines as
// strings, read back as answered (a count and the declines); rows stored before with every evaluation read the same.
import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../schemas/authorizations.js';
import { decidedTrail, storedTrail, type StoredStep, type TrailStep } from '../../src/store/authorization-trail.js';

const A = '01a22634-597b-7b99-ab02-6e8e70cf30ac';
const B = '01a22634-5c27-710f-807b-08a8dc160196';

const declines: StepRecord['rules'] = [
  { ruleId: B, version: 3, mode: 'active', outcome: 'declined', declineReason: 'VELOCITY_COUNT_EXCEEDED' },
  { ruleId: B, version: 4, mode: 'shadow', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' },
];
const answered: StepRecord = {
  step: 'spend-controls',
  outcome: 'declined',
  declineReason: 'VELOCITY_COUNT_EXCEEDED',
  ruleId: B,
  detail: "declined by rule 'x' (version 3)",
  evaluated: 4,
  rules: declines,
};

describe('storedTrail / decidedTrail', () => {
  it('stores the approving versions as one string and the declines compact; reads back the count and the declines', () => {
    const trail: TrailStep[] = [
      { step: 'card-state', outcome: 'approved' },
      { ...answered, approvedVersions: `${A}:12 ${A}:13:shadow` },
      { step: 'decision-endpoint', outcome: 'skipped', detail: 'not configured' },
    ];
    const stored = storedTrail(trail);
    expect(stored[1]).toEqual({
      step: 'spend-controls',
      outcome: 'declined',
      declineReason: 'VELOCITY_COUNT_EXCEEDED',
      ruleId: B,
      detail: "declined by rule 'x' (version 3)",
      approved: `${A}:12 ${A}:13:shadow`,
      rules: [`${B}:3:active:declined:VELOCITY_COUNT_EXCEEDED`, `${B}:4:shadow:declined:SPEND_CONTROL_DECLINED`],
    });
    expect(decidedTrail(JSON.parse(JSON.stringify(stored)) as StoredStep[])).toEqual([trail[0], answered, trail[2]]);
  });

  it('a step shared by many trails (every version approved) is stored once, the same every time', () => {
    const shared: TrailStep = Object.freeze({ step: 'spend-controls', outcome: 'approved', evaluated: 2, approvedVersions: `${A}:2 ${B}:5:shadow` });
    const first = storedTrail([shared])[0];
    expect(first).toEqual({ step: 'spend-controls', outcome: 'approved', approved: `${A}:2 ${B}:5:shadow` });
    expect(storedTrail([shared])[0]).toBe(first);
    expect(storedTrail([{ ...shared }])).toEqual([first]);
    expect(decidedTrail([first!])).toEqual([{ step: 'spend-controls', outcome: 'approved', evaluated: 2 }]);
  });

  it('rows stored before with every evaluation, as strings (decision 0404) or objects, read as answered now', () => {
    const strings = [`${A}:12`, `${A}:13:shadow:approved`, `${B}:3:active:declined:VELOCITY_COUNT_EXCEEDED`, `${B}:4:shadow:declined:SPEND_CONTROL_DECLINED`];
    const { evaluated: _n, rules: _r, ...head } = answered;
    expect(decidedTrail([{ ...head, rules: strings }])).toEqual([answered]);
    const objects = [{ ruleId: A, version: 12, mode: 'active', outcome: 'approved' } as const, ...declines!];
    expect(decidedTrail([{ ...head, rules: objects }])).toEqual([{ ...answered, evaluated: 3 }]);
    expect(decidedTrail([{ step: 'spend-controls', outcome: 'approved', rules: [`${A}:1`] }])).toEqual([{ step: 'spend-controls', outcome: 'approved', evaluated: 1 }]);
  });
});
