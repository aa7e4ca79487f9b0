// Which link destinations may become an `href`: absolute http, https and
// mailto URLs only. The parser (markdown.js) refuses every other link, so it
// stays text as written; the DOM builder checks again before setting `href`.

const SCHEMES = ["http:", "https:", "mailto:"];

/**
 * The destination of a link as it may be used in `href`, or null when it is
 * not an absolute http, https or mailto URL.
 */
export function safeHref(raw) {
  const value = String(raw ?? "").trim();
  // No control characters or spaces: browsers strip some of them while parsing,
  // which is how `java\tscript:` tricks work.
  if (value === "" || /[\u0000-\u0020\u007f]/.test(value)) return null;
  if (!/^(https?:\/\/|mailto:)/i.test(value)) return null;
  let url;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!SCHEMES.includes(url.protocol)) return null;
  if (url.protocol !== "mailto:" && url.hostname === "") return null;
  return url.href;
}
