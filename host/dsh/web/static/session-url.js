// Which Session an address names: `#/s/<id>` (what the page writes as the
// reader moves between conversations) or `?session=<id>` (what a
// notification opens: dsh-notify's service worker, DESIGN §14.2). The hash
// wins when both are there. The query form is taken once and then removed
// from the address, so the page's own `#/s/<id>` is the one that stays.

const SESSION_HASH = /^#\/s\/(.+)$/;

/** The Session id `#/s/<id>` names, or null. */
export function sessionFromHash(hash) {
  const match = SESSION_HASH.exec(hash);
  if (match === null) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

/**
 * The Session `location` names (see the header), or null. When it came from
 * `?session=`, the parameter is removed with `history.replaceState`.
 */
export function takeSessionFromUrl({ location, history }) {
  const fromHash = sessionFromHash(location.hash);
  const url = new URL(location.href);
  const fromQuery = url.searchParams.get("session");
  if (fromQuery === null) return fromHash;
  url.searchParams.delete("session");
  history.replaceState(history.state, "", `${url.pathname}${url.search}${url.hash}`);
  return fromHash ?? (fromQuery === "" ? null : fromQuery);
}
