// Structural equality for JSON values: the identity test the session window
// applies to a repeated seq. Key order is irrelevant (the server may serialize
// a stored event and a live one differently); everything else must match.

/**
 * True when `a` and `b` are the same JSON value: same primitive, or arrays of
 * equal items in order, or objects with the same keys mapped to equal values.
 * Non-JSON values (functions, undefined inside arrays) compare by identity.
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return false;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) {
      if (!jsonEqual(a[i], b[i])) return false;
    }
    return true;
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key])) return false;
  }
  return true;
}

/** Pretty JSON for display; never throws (cycles and BigInts become a note). */
export function prettyJson(value) {
  try {
    const text = JSON.stringify(value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return "[unserializable value]";
  }
}
