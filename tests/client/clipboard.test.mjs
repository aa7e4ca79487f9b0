import assert from "node:assert/strict";
import { test } from "node:test";

import { copyText } from "../../host/dsh/web/static/clipboard.js";
import { FakeDocument } from "./fake-dom.mjs";

test("the Clipboard API is used when the page may", async () => {
  const written = [];
  const navigator = { clipboard: { writeText: async (text) => written.push(text) } };
  assert.equal(await copyText("hello", { navigator, document: null }), true);
  assert.deepEqual(written, ["hello"]);
});

test("a refused Clipboard API falls back to a selected, removed textarea", async () => {
  const document = new FakeDocument();
  const commands = [];
  document.execCommand = (name) => {
    const area = document.body.querySelector("textarea");
    commands.push([name, area.value, area.selected, area.getAttribute("class")]);
    return true;
  };
  const navigator = {
    clipboard: {
      writeText: async () => {
        throw new Error("NotAllowedError");
      },
    },
  };
  assert.equal(await copyText("x < y", { navigator, document }), true);
  assert.deepEqual(commands, [["copy", "x < y", true, "clipboard-helper"]]);
  assert.equal(document.body.querySelector("textarea"), null);
  document.execCommand = () => {
    throw new Error("unsupported");
  };
  assert.equal(await copyText("z", { navigator: {}, document }), false);
  assert.equal(document.body.querySelector("textarea"), null);
  assert.equal(await copyText("z", { navigator: {}, document: {} }), false);
});
