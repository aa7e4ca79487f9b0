// Bidirectional text: user and model text is shown isolated (`dir="auto"`,
// which the HTML spec makes `unicode-bidi: isolate`), so a right-to-left
// override inside it (U+202E) cannot reverse anything outside its element,
// and a right-to-left message reads right to left. Where a control cannot be
// honest text — the label of a link made from a bare URL, which must read as
// the URL it opens — it is shown the way the URL carries it (`%E2%80%AE`).

/** The bidi controls: embeddings and overrides, isolates, and the three marks. */
export const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/** `element`, marked as user or model text: isolated, its direction its own. */
export function isolate(element) {
  element.setAttribute("dir", "auto");
  return element;
}

/** `text` with every bidi control written as its percent-encoding. */
export function visibleBidi(text) {
  return String(text).replace(BIDI_CONTROLS, (control) => encodeURIComponent(control));
}
