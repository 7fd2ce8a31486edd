// Who is signed in: the key (kept in this tab's sessionStorage only), what it may do, and the names of the keys it can see.
import { createApi, type Api, type KeyInfo } from './api.ts';

const KEY_ITEM = 'toolgate.console.key';

export interface Session {
  api: Api;
  /** The signed-in key, when the key list says which it is (a non-admin key sees only itself). */
  me: KeyInfo | undefined;
  role: KeyInfo['role'];
  /** Key names by id, as far as this key may list them (an admin: the keys within its scope). */
  keyNames: ReadonlyMap<string, string>;
  /** Workspaces named by the key's scope, when it names them ("*" names none). */
  scopeWorkspaces: string[];
}

/** Checks the key against the API and answers the session it opens; throws the API's error for a bad key. */
export async function signIn(secret: string): Promise<Session> {
  const api = createApi(secret);
  const { keys } = await api.get<{ keys: KeyInfo[] }>('/v1/keys');
  // Anyone but an admin sees exactly its own key; an admin sees the keys within its scope, itself among them.
  const me = keys.length === 1 ? keys[0] : undefined;
  const role = me?.role ?? 'admin';
  const scopeWorkspaces = [...new Set(keys.flatMap((key) => key.workspaces))].filter((name) => name !== '*').sort();
  sessionStorage.setItem(KEY_ITEM, secret);
  return { api, me, role, keyNames: new Map(keys.map((key) => [key.id, key.name])), scopeWorkspaces };
}

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function signOut(): void {
  sessionStorage.removeItem(KEY_ITEM);
}

export function mayDecide(session: Session): boolean {
  return session.role === 'approver' || session.role === 'admin';
}
