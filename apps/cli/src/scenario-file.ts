// Which file a scenario argument names: a path as given, else a scenario of the library
// (`quickstart`, `kreps-2014/producer-1-thread`) or one saved from the composer (`user/my-test`).
// The library's resolver is @kbench/app's, as the server's; here its errors become usage errors.
import path from 'node:path';
import { ScenarioFolderError, ScenarioLibrary, UnknownScenarioError } from '@kbench/app';
import { kbenchHome } from '@kbench/history';
import { fileErrorText } from '@kbench/schema';
import { defaultScenariosDir } from './paths.js';
import { UsageError } from './usage.js';

/** The scenario libraries: the checkout's scenarios/ and the composer's saved ones (named user/...). */
export function scenarioLibrary(): ScenarioLibrary {
  return new ScenarioLibrary(defaultScenariosDir(), path.join(kbenchHome(), 'scenarios'));
}

/**
 * The file a scenario argument names. A path that exists wins; otherwise a library name, with or
 * without its extension. A UsageError in words otherwise, with the nearest library name.
 */
export function resolveScenarioFile(arg: string): string {
  try {
    return scenarioLibrary().resolve(arg);
  } catch (err) {
    if (err instanceof ScenarioFolderError) {
      const inside = err.inside.length > 0 ? ` (${err.inside.join(', ')})` : '';
      const writeUp = err.writeUp ? `, or reproduce the whole write-up with kbench reproduce ${arg}` : '';
      throw new UsageError(`${arg} is a folder; name one scenario in it${inside}${writeUp}`);
    }
    if (err instanceof UnknownScenarioError) {
      throw new UsageError(
        `cannot read scenario ${arg}: ${fileErrorText(err.cause)}, and no scenario of the library is called that${err.didYouMean} (kbench run takes a file path or a library name such as quickstart or kreps-2014/producer-1-thread; the web's Scenarios page lists them)`,
      );
    }
    throw err;
  }
}
