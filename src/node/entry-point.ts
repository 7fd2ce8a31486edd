// Whether a module is the program Node was asked to run: a composition root runs its main() only then.
import { pathToFileURL } from 'node:url';

/** True for the file Node (or tsx) was started with; false when another program imports it (`toolgate serve` imports functions/node.ts). */
export function isEntryPoint(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;
}
