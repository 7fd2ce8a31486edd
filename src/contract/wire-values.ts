// The small value schemas every surface of the contract shares: counts, times and blob ids.
import { z } from 'zod';

/** A whole number of 0 or more. */
export const count = z.number().int().min(0);

export const time = z.string().meta({ format: 'date-time', description: 'ISO 8601, UTC.' });

/** A blob's id: the SHA-256 of its content, 64 lowercase hex digits. */
export const blobId = z.string().regex(/^[0-9a-f]{64}$/);

/** A whole number in a query string. */
export const queryCount = z
  .string()
  .regex(/^\d{1,15}$/, 'expected a whole number of 0 or more')
  .transform(Number);

/** A workspace id (and a webhook id): lowercase letters, digits, `_` and `-`, at most 63 characters. */
export const WORKSPACE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
