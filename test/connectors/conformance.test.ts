// Every connector in the registry runs every conformance scenario: registering a connector enrols it.
import { afterAll, describe, expect, it } from 'vitest';
import { builtInConnectors } from '../../connectors/index.js';
import { runScenario, scenarios, type ConformanceTarget } from '../../connectors/conformance/index.js';
import { conformanceTargets } from '../../connectors/conformance/targets.js';

describe('conformance enrolment', () => {
  it('every registered connector has a conformance target in connectors/conformance/targets.ts', () => {
    const missing = builtInConnectors.map((d) => d.id).filter((id) => !conformanceTargets[id]);
    expect(missing, 'add a target for each of these ids to connectors/conformance/targets.ts').toEqual([]);
  });

  it('scenario names are unique', () => {
    expect(new Set(scenarios.map((s) => s.name)).size).toBe(scenarios.length);
  });
});

for (const definition of builtInConnectors) {
  describe(`connector ${definition.id}`, () => {
    const factory = conformanceTargets[definition.id];
    if (!factory) {
      it('has a conformance target', () => {
        expect.fail(`connector '${definition.id}' is registered but connectors/conformance/targets.ts has no target for it`);
      });
      return;
    }
    let target: ConformanceTarget | undefined;
    const get = () => (target ??= factory());
    afterAll(async () => {
      await target?.dispose?.();
    });

    for (const scenario of scenarios) {
      it(scenario.name, async () => {
        const result = await runScenario(get(), scenario);
        // A built-in offers every operation: "not offered" would be a gap, not a pass.
        if (result.outcome !== 'passed') expect.fail(result.reason);
      });
    }
  });
}
