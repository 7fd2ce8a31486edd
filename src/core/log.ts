// What the server reports that no caller sees (a failure in the background, an internal error): one function, injected by the home.
export type Log = (message: string, cause?: unknown) => void;

/** The homes' log: standard error, each line marked as toolgate's. Modules take a `log` and fall back to this one only. */
export const consoleLog: Log = (message, cause) => {
  if (cause === undefined) console.error(`toolgate: ${message}`);
  else console.error(`toolgate: ${message}`, cause);
};
