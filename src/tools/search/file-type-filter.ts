// ripgrep's -t NAME: whether a file's name matches one of the type's globs.
import { ToolError } from '../../core/errors.ts';
import { fileTypes } from './file-types.ts';
import { gitignoreRules } from './path-rules.ts';

/** Type names offered when an unknown one is asked for. */
const COMMON_TYPES = ['ts', 'js', 'py', 'rust', 'go', 'java', 'c', 'cpp', 'md', 'json', 'yaml', 'sh'];

/** A test of file names for the type `name` (`all`: any known type); an unknown name is invalid_argument. */
export function fileTypeFilter(name: string): (fileName: string) => boolean {
  const globs =
    name === 'all' ? Object.values(fileTypes).flat() : Object.hasOwn(fileTypes, name) ? fileTypes[name] : undefined;
  if (globs === undefined) {
    throw new ToolError(
      'invalid_argument',
      `${JSON.stringify(name)} is not a ripgrep file type; use one of ${COMMON_TYPES.join(', ')} (ripgrep's names, ${Object.keys(fileTypes).length} in all).`,
      { type: name, known: COMMON_TYPES },
    );
  }
  // The globs hold no '/', so they match the name alone, as ripgrep matches them.
  const rules = gitignoreRules(globs);
  return (fileName) => rules.match(fileName, false) === 'ignore';
}
