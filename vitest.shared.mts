// Shared by the vitest configs that run test files two at a time (apps/cli, packages/engine).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * A sequencer that starts the named files first, in the order given (`name` for `test/<name>.test.ts`),
 * then the rest: the longest files run beside the short ones rather than after them.
 */
export function longestFirst(names: string[]): typeof BaseSequencer {
  return class LongestFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const rank = (spec: TestSpecification) => {
        const i = names.findIndex((name) => spec.moduleId.endsWith(`/test/${name}.test.ts`));
        return i < 0 ? names.length : i;
      };
      return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
    }
  };
}
