// Markdown as DOM: markdown-it's tokens (markdown.js) built into plain
// semantic elements with createElement and createTextNode only, math into
// MathML elements (markdown-katex.js). Which element a token becomes is
// decided here, from the token's type: no tag name, attribute or markup is
// ever taken from the text. Links carry only hrefs `safeHref` accepts (http,
// https, mailto), open in a new tab and send no referrer; an image is never
// loaded, it becomes a link to itself labelled with its alt text. Every code
// block gets a [data-action=copy] button (the conversation view handles the
// click). The root, every block of text and every link are isolated with
// their own direction (bidi.js): a U+202E in one paragraph or link reverses
// nothing outside it. The builder walks the flat token stream with an
// explicit stack, so no nesting depth can exhaust the call stack.

import { isolate, visibleBidi } from "./bidi.js";
import { h } from "./dom.js";
import { renderMath } from "./markdown-katex.js";
import { safeHref } from "./markdown-links.js";
import { fenceLanguage, parseMarkdown } from "./markdown.js";

/**
 * Render `source` into a new `<div class="md">`. `t` translates the copy
 * button's label ("copy", "copyCode"); `streaming` marks text still being
 * written (markdown.js says what changes).
 */
export function renderMarkdown(document, source, { t = (key) => key, streaming = false } = {}) {
  const root = isolate(h(document, "div", { class: "md" }));
  const builder = new Builder(document, t, root);
  for (const token of parseMarkdown(source, { streaming })) builder.block(token);
  return root;
}

// Block containers: the token type of the opener, the element it becomes.
const CONTAINERS = {
  blockquote_open: () => ["blockquote", {}, false],
  bullet_list_open: () => ["ul", {}, false],
  ordered_list_open: (token) => {
    const start = Number(token.attrGet("start") ?? 1);
    return ["ol", { start: start !== 1 ? start : undefined }, false];
  },
  list_item_open: (token) => [
    "li",
    { class: token.meta?.task ? "task" : undefined },
    true,
  ],
  paragraph_open: () => ["p", {}, true],
  heading_open: (token) => [/^h[1-6]$/.test(token.tag) ? token.tag : "h6", {}, true],
  table_open: () => ["table", {}, false],
  thead_open: () => ["thead", {}, false],
  tbody_open: () => ["tbody", {}, false],
  tr_open: () => ["tr", {}, false],
  th_open: (token) => ["th", { class: alignClass(token) }, true],
  td_open: (token) => ["td", { class: alignClass(token) }, true],
};

/** How deep quotes and lists nest as elements; deeper ones keep their text only. */
export const MAX_BLOCK_DEPTH = 12;
const NESTING = new Set(["blockquote_open", "bullet_list_open", "ordered_list_open", "list_item_open"]);

/** How deep emphasis, strong and strikethrough nest; deeper ones keep their markers as text. */
export const MAX_INLINE_DEPTH = 16;

const INLINE_WRAPPERS = { em_open: "em", strong_open: "strong", s_open: "del" };

function alignClass(token) {
  const match = /text-align:(left|center|right)/.exec(token.attrGet("style") ?? "");
  return match === null ? undefined : `align-${match[1]}`;
}

class Builder {
  constructor(document, t, root) {
    this.document = document;
    this.t = t;
    this.stack = [root];
  }

  get top() {
    return this.stack.at(-1);
  }

  block(token) {
    const open = CONTAINERS[token.type];
    if (open !== undefined) return this.openBlock(token, open(token));
    if (token.nesting === -1) return this.closeBlock(token);
    switch (token.type) {
      case "inline":
        return this.inline(token.children ?? []);
      case "fence":
      case "code_block":
        return this.top.appendChild(this.codeBlock(token));
      case "math_block":
        return this.top.appendChild(this.mathBlock(token));
      case "hr":
        return this.top.appendChild(h(this.document, "hr"));
      default:
        // html_block cannot occur (html: false); anything unknown shows as text.
        if (token.content) this.top.appendChild(this.document.createTextNode(token.content));
    }
  }

  openBlock(token, [tag, attrs, isText]) {
    // A tight list's paragraphs are hidden: their text goes straight into the
    // item. Quotes and lists past the depth cap are dropped, their text kept.
    if (token.hidden || (this.stack.length > MAX_BLOCK_DEPTH && NESTING.has(token.type))) {
      this.stack.push(this.top);
      return;
    }
    const element = h(this.document, tag, attrs);
    if (isText) isolate(element);
    if (token.type === "table_open") {
      // Wide tables scroll inside their own box, never the page.
      this.top.appendChild(h(this.document, "div", { class: "table-wrap" }, [element]));
      this.stack.push(element);
      return;
    }
    this.top.appendChild(element);
    this.stack.push(element);
    if (token.meta?.task) {
      element.appendChild(h(this.document, "input", {
        type: "checkbox",
        disabled: true,
        checked: token.meta.task === "done",
      }));
    }
  }

  closeBlock() {
    if (this.stack.length > 1) this.stack.pop();
  }

  codeBlock(token) {
    const { document, t } = this;
    // Letters, digits and + # . - _ only: the label is also a class name.
    const lang = fenceLanguage(token.info).replace(/[^\p{L}\p{N}_+#.-]/gu, "").slice(0, 32);
    const text = token.content.endsWith("\n") ? token.content.slice(0, -1) : token.content;
    const code = h(document, "code", { class: lang ? `language-${lang}` : undefined }, [text]);
    const copy = h(document, "button", {
      type: "button",
      class: "copy-code",
      "data-action": "copy",
      "aria-label": t("copyCode"),
    }, [t("copy")]);
    const head = h(document, "div", { class: "code-head" }, [h(document, "span", { class: "code-lang" }, [lang]), copy]);
    return h(document, "div", { class: "code-block", "data-role": "code-block" }, [head, h(document, "pre", {}, [code])]);
  }

  mathBlock(token) {
    const { document } = this;
    // Not closed yet (still streaming, or never): the source, as written.
    if (!token.meta.closed) return h(document, "pre", { class: "math-source" }, [h(document, "code", {}, [token.meta.source])]);
    const math = renderMath(document, token.content, { display: true, source: token.meta.source });
    return h(document, "div", { class: "math-block" }, [math.localName === "code" ? h(document, "pre", {}, [math]) : math]);
  }

  inline(children) {
    const { document } = this;
    const base = this.stack.length;
    let autolink = false;
    for (const token of children) {
      const wrapper = INLINE_WRAPPERS[token.type];
      if (wrapper !== undefined) {
        if (this.stack.length - base < MAX_INLINE_DEPTH) this.push(h(document, wrapper));
        else this.keepMarker(token);
        continue;
      }
      switch (token.type) {
        case "text":
        case "math_pending":
          this.text(autolink ? visibleBidi(token.content) : token.content);
          break;
        case "softbreak":
          this.text("\n");
          break;
        case "hardbreak":
          this.top.appendChild(h(document, "br"));
          break;
        case "code_inline":
          this.top.appendChild(h(document, "code", {}, [token.content]));
          break;
        case "math_inline":
          this.top.appendChild(renderMath(document, token.content, { display: token.meta.display, source: token.meta.source }));
          break;
        case "link_open":
          autolink = token.info === "auto";
          this.push(this.link(token.attrGet("href"), token.attrGet("title")));
          break;
        case "image":
          this.image(token);
          break;
        case "link_close":
          autolink = false;
          if (this.stack.length > base) this.stack.pop();
          break;
        default:
          if (token.nesting === -1) {
            if (this.stack.length > base && this.stack.pop() === this.top) this.text(token.markup);
          } else if (token.content) {
            // html_inline cannot occur (html: false); anything unknown shows as text.
            this.text(token.content);
          }
      }
    }
    this.stack.length = base;
  }

  /** A link element, or (for an href the allowlist refuses) the current parent. */
  link(rawHref, title) {
    const href = safeHref(rawHref);
    if (href === null) return this.top;
    return isolate(h(this.document, "a", {
      href,
      title: title || undefined,
      rel: "noopener noreferrer",
      target: "_blank",
    }));
  }

  image(token) {
    const alt = token.content || token.attrGet("src") || "";
    const link = this.link(token.attrGet("src"), token.attrGet("title"));
    if (link === this.top) {
      this.text(alt);
      return;
    }
    link.setAttribute("class", "image-link");
    link.appendChild(this.document.createTextNode(alt));
    this.top.appendChild(link);
  }

  /** Past the depth cap a wrapper is dropped, its marker kept as text; its close does the same. */
  keepMarker(token) {
    this.text(token.markup);
    this.stack.push(this.top);
  }

  push(element) {
    if (element !== this.top) this.top.appendChild(element);
    this.stack.push(element);
  }

  text(value) {
    if (value !== "") this.top.appendChild(this.document.createTextNode(value));
  }
}
