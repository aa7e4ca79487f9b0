// Copying text for the copy buttons: the async Clipboard API where the page
// may use it (loopback is a secure context), else the old selection trick.

/** Copy `text`; resolves to true when it reached the clipboard. */
export async function copyText(text, { navigator = globalThis.navigator, document = globalThis.document } = {}) {
  const value = String(text);
  if (typeof navigator?.clipboard?.writeText === "function") {
    try {
      await navigator.clipboard.writeText(value);
      return true;
    } catch {
      // Denied (no user activation, a permission policy): try the fallback.
    }
  }
  if (typeof document?.execCommand !== "function" || !document.body) return false;
  const area = document.createElement("textarea");
  area.value = value;
  area.setAttribute("readonly", "");
  area.setAttribute("class", "clipboard-helper");
  document.body.appendChild(area);
  let copied = false;
  try {
    area.select?.();
    copied = document.execCommand("copy") === true;
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}
