// The servers a test file has started and not yet seen exit, by what a failed test prints of them
// (test/support/server-output-on-failure.ts); kept apart so that set-up imports nothing else.

export interface RunningServer {
  url: string;
  output: () => string;
}

export const runningServers = new Set<RunningServer>();
