// TeX as MathML DOM, through KaTeX (vendor/katex, MIT). KaTeX parses the TeX
// and builds its MathML as a tree of its own node objects
// (`__renderToDomTree` with `output: "mathml"`); this module walks that tree
// and creates the elements itself, with `createElementNS`, from two
// allowlists: MathML element names and, per attribute, a value pattern.
//
// Why the tree and not a string: KaTeX's `renderToString` gives markup, which
// would have to be parsed again (as HTML, or as XML with a sanitiser after it).
// Walking the tree parses nothing: no markup exists at any point, so nothing
// can be smuggled through escaping, and what reaches the page is exactly
// what the allowlists name — never `href`, `xlink:href`, `actiontype`,
// `style`, `src`, event handlers, `maction` or `mglyph`, whatever KaTeX or a
// later KaTeX version puts in its tree. KaTeX runs with `trust: false` (no
// `\href`, `\url`, `\includegraphics`, `\html…`) and `maxExpand` bounds
// macro expansion. MathML needs no fonts and no stylesheet.
//
// A formula KaTeX refuses (or one too long, or nested too deep) is shown as
// its source, in a code element: the reader sees what the model wrote.

import katex from "./vendor/katex/katex.mjs";
import { h } from "./dom.js";
import { MAX_FORMULA } from "./markdown-math.js";

const MATHML = "http://www.w3.org/1998/Math/MathML";

/** MathML elements a formula may contain (MathML Core, as KaTeX uses it). */
const ELEMENTS = new Set([
  "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
  "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mstyle", "mtable", "mtr", "mtd",
  "mlabeledtr", "mover", "munder", "munderover", "mpadded", "mphantom", "menclose", "merror",
  "mmultiscripts", "mprescripts", "none",
]);

const LENGTH = /^[+-]?(\d+(\.\d*)?|\.\d+)(em|ex|px|pt|mu|%)?$/;
const WORD = /^[a-z -]{1,64}$/i;
const COLOR = /^(#[0-9a-f]{3,8}|[a-z]{1,32})$/i;
const BOOLEAN = /^(true|false)$/;

/** Attributes a formula element may carry, each with the values it may take. */
const ATTRIBUTES = new Map([
  ["display", /^(block|inline)$/],
  ["displaystyle", BOOLEAN],
  ["scriptlevel", /^[+-]?\d$/],
  ["mathvariant", WORD],
  ["mathsize", LENGTH],
  ["mathcolor", COLOR],
  ["mathbackground", COLOR],
  ["encoding", /^application\/x-tex$/],
  ["stretchy", BOOLEAN],
  ["fence", BOOLEAN],
  ["separator", BOOLEAN],
  ["accent", BOOLEAN],
  ["accentunder", BOOLEAN],
  ["largeop", BOOLEAN],
  ["movablelimits", BOOLEAN],
  ["symmetric", BOOLEAN],
  ["form", /^(prefix|infix|postfix)$/],
  ["lspace", LENGTH],
  ["rspace", LENGTH],
  ["minsize", LENGTH],
  ["maxsize", LENGTH],
  ["width", LENGTH],
  ["height", LENGTH],
  ["depth", LENGTH],
  ["voffset", LENGTH],
  ["linethickness", LENGTH],
  ["notation", WORD],
  ["columnalign", WORD],
  ["rowalign", WORD],
  ["columnspacing", /^[\w. -]{1,256}$/],
  ["rowspacing", /^[\w. -]{1,256}$/],
  ["columnlines", WORD],
  ["rowlines", WORD],
  ["frame", WORD],
]);

/** How deep a formula's tree may be; deeper formulas show their source. */
export const MAX_FORMULA_DEPTH = 64;

const OPTIONS = {
  output: "mathml",
  throwOnError: true,
  trust: false,
  strict: "ignore",
  maxExpand: 500,
  maxSize: 50,
};

// A streamed answer is rendered again at every delta, each formula with it:
// KaTeX's tree for a formula (or its refusal) is remembered, for the last
// TREE_MEMO formulas, so a re-render only builds DOM. The memo holds KaTeX's
// output for a TeX string, a pure function of it: nothing else is kept.
const TREE_MEMO = 256;
const trees = new Map();

/** KaTeX's MathML tree for `tex`, or the Error it raised. */
function katexTree(tex, display) {
  const key = `${display ? "D" : "I"}${tex}`;
  let tree = trees.get(key);
  if (tree === undefined) {
    try {
      if (tex.length > MAX_FORMULA) throw new Error("formula too long");
      tree = katex.__renderToDomTree(tex, { ...OPTIONS, displayMode: display });
    } catch (error) {
      tree = error instanceof Error ? error : new Error(String(error));
    }
    if (trees.size >= TREE_MEMO) trees.delete(trees.keys().next().value);
  } else {
    trees.delete(key);
  }
  trees.set(key, tree);
  return tree;
}

/**
 * A MathML `<math>` element for the TeX `tex` (display or inline), or — when
 * KaTeX refuses it — a `<code class="math-source">` holding `source` (the
 * formula as written, delimiters included) with KaTeX's message as title.
 */
export function renderMath(document, tex, { display = false, source = tex } = {}) {
  try {
    const tree = katexTree(tex, display);
    if (tree instanceof Error) throw tree;
    const math = tree.children?.[0];
    if (math?.type !== "math") throw new Error("KaTeX gave no math element");
    return buildElement(document, math);
  } catch (error) {
    return h(document, "code", { class: "math-source", title: String(error?.message ?? error).slice(0, 200) }, [source]);
  }
}

/** Build KaTeX's MathML node tree iteratively (no recursion limit to hit), or throw. */
function buildElement(document, root) {
  const top = element(document, root);
  const stack = [{ node: root, parent: top, depth: 0 }];
  while (stack.length > 0) {
    const { node, parent, depth } = stack.pop();
    if (depth > MAX_FORMULA_DEPTH) throw new Error("formula nested too deep");
    const children = node.children ?? [];
    const built = children.map((child) => buildNode(document, child));
    for (let i = 0; i < children.length; i += 1) {
      parent.appendChild(built[i]);
      if (built[i].nodeType === 1) stack.push({ node: children[i], parent: built[i], depth: depth + 1 });
    }
  }
  return top;
}

function buildNode(document, node) {
  if (typeof node.text === "string") return document.createTextNode(node.text);
  // KaTeX's SpaceNode: a spacing character, or an <mspace> of a width.
  if ("character" in node && "width" in node) {
    if (node.character) return document.createTextNode(node.character);
    const space = document.createElementNS(MATHML, "mspace");
    setAllowed(space, "width", `${Number(node.width)}em`);
    return space;
  }
  return element(document, node);
}

function element(document, node) {
  const tag = node.type;
  if (typeof tag !== "string" || !ELEMENTS.has(tag)) throw new Error(`unexpected MathML element ${String(tag)}`);
  const built = document.createElementNS(MATHML, tag);
  for (const [name, value] of Object.entries(node.attributes ?? {})) setAllowed(built, name, value);
  return built;
}

/** Set `name` only when the allowlist names it and `value` matches its pattern. */
function setAllowed(element, name, value) {
  const pattern = ATTRIBUTES.get(name);
  const text = String(value);
  if (pattern !== undefined && pattern.test(text)) element.setAttribute(name, text);
}
