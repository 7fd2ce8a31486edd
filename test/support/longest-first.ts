// A pass's test files that take longest start first, so the pass does not end on one long file while
// the other worker idles (on a fresh clone vitest has no timings of past runs to order them by). The
// rest keep vitest's own order.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A sequencer that starts the named files first, in the order given (paths from the repository root). */
export function longestFirst(longest: readonly string[]): typeof BaseSequencer {
  return class LongestFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const rank = (file: TestSpecification) => {
        const index = longest.findIndex((name) => file.moduleId.endsWith(`/${name}`));
        return index < 0 ? longest.length : index;
      };
      // Array sort is stable: files outside the list stay in vitest's order.
      return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
    }
  };
}
