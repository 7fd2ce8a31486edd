// Reads how many requests each Durable Object of a `npm run start:worker` home served, from the
// objects' own storage under wrangler's state dir (TOOLGATE_COUNT_OBJECT_REQUESTS=on counts them).
import Database from 'better-sqlite3';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** One object: its class, its id (the file wrangler keeps its storage in) and the requests it served. */
export interface ObjectRequests {
  objectClass: string;
  id: string;
  requests: number;
}

export function objectRequests(dataDir: string): ObjectRequests[] {
  const root = join(dataDir, 'wrangler', 'v3', 'do');
  if (!existsSync(root)) return [];
  const counted: ObjectRequests[] = [];
  for (const folder of readdirSync(root)) {
    const objectClass = folder.replace(/^toolgate-/, '');
    for (const file of readdirSync(join(root, folder))) {
      if (!file.endsWith('.sqlite') || file === 'metadata.sqlite') continue;
      const db = new Database(join(root, folder, file), { readonly: true, fileMustExist: true });
      try {
        const table = db.prepare("SELECT name FROM sqlite_master WHERE name = 'object_requests'").get();
        const row = table
          ? (db.prepare('SELECT n FROM object_requests WHERE id = 1').get() as { n: number } | undefined)
          : undefined;
        if (row) counted.push({ objectClass, id: file.replace(/\.sqlite$/, ''), requests: row.n });
      } finally {
        db.close();
      }
    }
  }
  return counted;
}
