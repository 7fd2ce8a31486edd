// A process log as text: terminal control sequences dropped.

/**
 * Terminal control sequences (a process started with tty: colours, cursor moves) dropped, so the
 * tail reads as text; the log itself keeps them.
 */
// eslint-disable-next-line no-control-regex -- ESC and BEL are what these sequences are made of.
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\r(?=\n)/g;

export function plainText(log: string): string {
  return log.replace(CONTROL, '');
}
