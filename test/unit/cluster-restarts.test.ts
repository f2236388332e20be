// The primary's answer to a worker that dies while it starts: give up on the very first start and on a crash
// loop; otherwise fork it again after a back-off that doubles, the count starting over once a worker is ready.
import { describe, expect, it } from 'vitest';
import { CRASH_LOOP_FAILURES, StartFailures } from '../../src/cluster.js';

describe('StartFailures', () => {
  it('gives up when the very first start fails', () => {
    expect(new StartFailures().failed()).toBe('give up');
  });

  it('backs off, doubling, and gives up after several failures in a row', () => {
    const failures = new StartFailures();
    failures.ready();
    const answers = Array.from({ length: CRASH_LOOP_FAILURES }, () => failures.failed());
    expect(answers).toEqual([1_000, 2_000, 4_000, 8_000, 'give up']);
  });

  it('starts counting over once a worker is ready', () => {
    const failures = new StartFailures();
    failures.ready();
    for (let i = 1; i < CRASH_LOOP_FAILURES; i++) failures.failed();
    failures.ready();
    expect(failures.failed()).toBe(1_000);
  });
});
