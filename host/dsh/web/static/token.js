// The access token: taken from `?token=` once, then kept in the origin's
// localStorage, so it does not stay in the address bar and every tab or
// bookmark of the same address has it (docs/DESIGN.md §11 says why this
// store and not a cookie). A token an older page kept per tab
// (sessionStorage) is moved over once.

export const TOKEN_KEY = "dsh.token";

/**
 * Return the token. If the URL carries `?token=`, store it, remove it from
 * the address bar (history.replaceState) and return it; otherwise return the
 * stored one (`storage`, else the one `legacy` kept, moved to `storage`), or null.
 */
export function takeToken({ location, history, storage, legacy = null }) {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get("token");
  if (fromUrl) {
    try {
      storage?.setItem(TOKEN_KEY, fromUrl);
    } catch {
      // No storage: the token lives only in this page.
    }
    url.searchParams.delete("token");
    history.replaceState(history.state, "", `${url.pathname}${url.search}${url.hash}`);
    return fromUrl;
  }
  const kept = read(storage);
  if (kept !== null) return kept;
  const old = read(legacy);
  if (old !== null) keepToken(storage, old);
  return old;
}

function read(storage) {
  try {
    return storage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

/** Keep `token` for every tab of this origin (a reader pasted a new one); false without storage. */
export function keepToken(storage, token) {
  try {
    storage?.setItem(TOKEN_KEY, token);
    return storage !== null && storage !== undefined;
  } catch {
    return false;
  }
}
