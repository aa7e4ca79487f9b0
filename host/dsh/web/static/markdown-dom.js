// Markdown as DOM: the tree of markdown.js built into plain semantic elements
// with createElement and createTextNode only. Links carry only the hrefs
// markdown.js let through (http, https, mailto), open in a new tab and send
// no referrer; every code block gets a [data-action=copy] button (the
// conversation view handles the click). The root, every block of text and
// every link are isolated with their own direction (bidi.js): a U+202E in
// one paragraph or link reverses nothing outside it.

import { isolate } from "./bidi.js";
import { h } from "./dom.js";
import { parseMarkdown } from "./markdown.js";

/**
 * Render `source` into a new `<div class="md">`. `t` translates the copy
 * button's label ("copy", "copyCode").
 */
export function renderMarkdown(document, source, { t = (key) => key } = {}) {
  const root = isolate(h(document, "div", { class: "md" }));
  appendBlocks({ document, t }, root, parseMarkdown(source).children, false);
  return root;
}

function appendBlocks(ctx, parent, blocks, tight) {
  for (const block of blocks) {
    if (tight && block.type === "paragraph") appendInline(ctx, parent, block.children);
    else parent.appendChild(blockElement(ctx, block));
  }
  return parent;
}

function blockElement(ctx, block) {
  const { document } = ctx;
  switch (block.type) {
    case "paragraph":
      return appendInline(ctx, isolate(h(document, "p")), block.children);
    case "heading":
      return appendInline(ctx, isolate(h(document, `h${block.level}`)), block.children);
    case "code":
      return codeBlock(ctx, block);
    case "quote":
      return appendBlocks(ctx, h(document, "blockquote"), block.children, false);
    case "list":
      return list(ctx, block);
    case "table":
      return table(ctx, block);
    default:
      return h(document, "hr");
  }
}

function codeBlock({ document, t }, block) {
  const code = h(document, "code", { class: block.lang ? `language-${block.lang}` : undefined }, [block.text]);
  const copy = h(document, "button", {
    type: "button",
    class: "copy-code",
    "data-action": "copy",
    "aria-label": t("copyCode"),
  }, [t("copy")]);
  const head = h(document, "div", { class: "code-head" }, [
    h(document, "span", { class: "code-lang" }, [block.lang]),
    copy,
  ]);
  return h(document, "div", { class: "code-block", "data-role": "code-block" }, [
    head,
    h(document, "pre", {}, [code]),
  ]);
}

function list(ctx, block) {
  const { document } = ctx;
  const attrs = block.ordered && block.start !== 1 ? { start: block.start } : {};
  const element = h(document, block.ordered ? "ol" : "ul", attrs);
  for (const item of block.items) element.appendChild(appendBlocks(ctx, isolate(h(document, "li")), item, block.tight));
  return element;
}

function table(ctx, block) {
  const { document } = ctx;
  const row = (cells, tag) =>
    h(
      document,
      "tr",
      {},
      cells.map((cell, index) =>
        appendInline(ctx, isolate(h(document, tag, { class: block.align[index] ? `align-${block.align[index]}` : undefined })), cell),
      ),
    );
  const element = h(document, "table", {}, [
    h(document, "thead", {}, [row(block.head, "th")]),
    block.rows.length > 0 ? h(document, "tbody", {}, block.rows.map((cells) => row(cells, "td"))) : null,
  ]);
  // Wide tables scroll inside their own box, never the page.
  return h(document, "div", { class: "table-wrap" }, [element]);
}

function appendInline(ctx, parent, nodes) {
  const { document } = ctx;
  for (const node of nodes) {
    switch (node.type) {
      case "text":
        parent.appendChild(document.createTextNode(node.text));
        break;
      case "code":
        parent.appendChild(h(document, "code", {}, [node.text]));
        break;
      case "link":
        parent.appendChild(
          appendInline(
            ctx,
            isolate(h(document, "a", {
              href: node.href,
              title: node.title || undefined,
              rel: "noopener noreferrer",
              target: "_blank",
            })),
            node.children,
          ),
        );
        break;
      default:
        parent.appendChild(appendInline(ctx, h(document, node.type === "del" ? "del" : node.type), node.children));
    }
  }
  return parent;
}
