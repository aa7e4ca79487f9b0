// Light and dark: the page follows `prefers-color-scheme` until the reader
// picks a theme with the toggle; the pick is kept in localStorage. A pick
// equal to what the system asks for is stored as "follow the system", so a
// reader who toggles back lets the system decide again.

export const THEME_KEY = "dsh.theme";
const THEMES = ["light", "dark"];

/**
 * Control the theme of `root` (document.documentElement): it carries
 * `data-theme="light|dark"` only while the reader's pick overrides the
 * system. `matchMedia` is window.matchMedia (optional); `storage` is
 * localStorage (optional, may throw).
 *
 * Returns `{effective(), choice(), toggle(), subscribe(listener), destroy()}`.
 */
export function createTheme({ root, storage = null, matchMedia = null }) {
  const query = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  const listeners = new Set();
  let choice = read(storage);

  const system = () => (query?.matches ? "dark" : "light");
  const effective = () => choice ?? system();
  const onSystemChange = () => {
    apply();
    emit();
  };
  query?.addEventListener?.("change", onSystemChange);

  function apply() {
    if (choice === null) root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", choice);
  }

  function emit() {
    for (const listener of [...listeners]) listener(effective());
  }

  function toggle() {
    const next = effective() === "dark" ? "light" : "dark";
    choice = next === system() ? null : next;
    write(storage, choice);
    apply();
    emit();
    return effective();
  }

  apply();
  return Object.freeze({
    effective,
    choice: () => choice,
    toggle,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    destroy() {
      query?.removeEventListener?.("change", onSystemChange);
      listeners.clear();
    },
  });
}

function read(storage) {
  try {
    const value = storage?.getItem(THEME_KEY) ?? null;
    return THEMES.includes(value) ? value : null;
  } catch {
    return null;
  }
}

function write(storage, choice) {
  try {
    if (choice === null) storage?.removeItem(THEME_KEY);
    else storage?.setItem(THEME_KEY, choice);
  } catch {
    // Storage can be disabled; the pick lasts for this page only.
  }
}
