// The access token: taken from `?token=` once, then kept in sessionStorage so
// it neither stays in the address bar nor survives the tab.

export const TOKEN_KEY = "dsh.token";

/**
 * Return the token. If the URL carries `?token=`, store it, remove it from
 * the address bar (history.replaceState) and return it; otherwise return the
 * stored one, or null.
 */
export function takeToken({ location, history, storage }) {
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
  try {
    return storage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

/** Keep `token` for this tab (a reader pasted a new one); false without storage. */
export function keepToken(storage, token) {
  try {
    storage?.setItem(TOKEN_KEY, token);
    return storage !== null && storage !== undefined;
  } catch {
    return false;
  }
}
