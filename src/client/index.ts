// toolgate/client: the typed client of the HTTP contract, with its error classes and the contract's types.
export { ToolgateClient, type ToolgateClientOptions } from './toolgate-client.ts';
export { readServerEvents, type ServerEvent } from '../core/server-events.ts';
export type { FollowLogsOptions, LogChunk } from './log-follow.ts';
export { ToolgateConnectionError, ToolgateError, UNEXPECTED_RESPONSE } from './toolgate-error.ts';
export type * from './api-types.ts';
export type * from './tool-types.ts';
