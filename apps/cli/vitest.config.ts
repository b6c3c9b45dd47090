import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Two test files at a time (each spawns kbench with its own KBENCH_HOME and ports), the longest first:
// `reproduce --all --quick` alone takes about 6 minutes, and the other files run beside it on the
// second worker instead of after it. This keeps `npm test` (and .ci/run) within its time budget.
const LONGEST_FIRST = ['reproduce-all', 'agents', 'gate', 'run-slot', 'reproduce'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => spec.moduleId.endsWith(`/test/${name}.test.ts`));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    testTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
  },
});
