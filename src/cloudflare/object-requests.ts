// Counts the requests an object serves, in its own storage, when TOOLGATE_COUNT_OBJECT_REQUESTS is
// on: how docs/scale.md measures the spread of load over objects under wrangler dev.
import { readSetting } from '../contract/settings.ts';
import type { DurableObjectStorageBinding } from '../storage/durable-object-sql-database.ts';
import type { Env } from './bindings.ts';

/** What counts one request: nothing at all unless the setting is on. */
export function objectRequestCounter(storage: DurableObjectStorageBinding, env: Env): () => void {
  if (!readSetting(env, 'TOOLGATE_COUNT_OBJECT_REQUESTS', 'cloudflare')) return () => undefined;
  storage.sql.exec('CREATE TABLE IF NOT EXISTS object_requests (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)').toArray();
  return () => {
    storage.sql
      .exec('INSERT INTO object_requests (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1')
      .toArray();
  };
}
