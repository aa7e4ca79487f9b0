// The small pieces of the page: banner, header, composer, sidebar.

import assert from "node:assert/strict";
import { test } from "node:test";

import { createBanner } from "../../host/dsh/web/static/banner.js";
import { createComposer } from "../../host/dsh/web/static/composer.js";
import { createHeader } from "../../host/dsh/web/static/header.js";
import { Labels, translator } from "../../host/dsh/web/static/i18n.js";
import { SEARCH_DELAY_MS, createSidebar } from "../../host/dsh/web/static/sidebar.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeTimers } from "./fake-server.mjs";

test("the banner shows a message worded anew on a language change, and can be dismissed", () => {
  const banner = createBanner(new FakeDocument());
  assert.equal(banner.element.getAttribute("role"), "alert");
  assert.ok(banner.element.hasAttribute("hidden"));
  let t = translator("en");
  banner.show(() => t("offline"));
  assert.equal(banner.shown(), "dsh web did not answer (is it running?)");
  assert.equal(banner.element.hasAttribute("hidden"), false);
  t = translator("zh");
  banner.applyLang(t);
  assert.match(banner.element.textContent, /没有响应/);
  assert.equal(banner.element.querySelector("[data-action=dismiss-banner]").getAttribute("aria-label"), "关闭");
  banner.element.querySelector("[data-action=dismiss-banner]").click();
  assert.ok(banner.element.hasAttribute("hidden"));
  assert.equal(banner.shown(), null);
  banner.applyLang(t);
  assert.equal(banner.element.textContent, "×");
});

test("the header shows the title with the id on hover, the drawer state and the connection status", () => {
  const labels = new Labels();
  let menus = 0;
  const header = createHeader({ document: new FakeDocument(), labels, onMenu: () => (menus += 1) });
  labels.apply(translator("en"));
  header.setTitle("Trip", "0123456789abcdef");
  const title = header.element.querySelector("[data-role=title]");
  assert.equal(title.textContent, "Trip");
  assert.equal(title.getAttribute("title"), "0123456789abcdef");
  header.setTitle(null, null);
  assert.equal(title.textContent, "");
  assert.equal(title.getAttribute("title"), null);
  header.setStatus("reconnecting", "Reconnecting…");
  const status = header.element.querySelector("[data-role=status]");
  assert.equal(status.getAttribute("data-state"), "reconnecting");
  assert.equal(status.hasAttribute("hidden"), false);
  header.setStatus("live", "");
  assert.ok(status.hasAttribute("hidden"));
  header.menu.click();
  assert.equal(menus, 1);
  header.setDrawer(true);
  assert.equal(header.menu.getAttribute("aria-expanded"), "true");
  assert.equal(header.menu.getAttribute("aria-label"), "Conversations");
});

test("the composer sends on Enter and Send, keeps Shift+Enter and IME Enter, and shows Stop while running", () => {
  const labels = new Labels();
  const sent = [];
  let stops = 0;
  const composer = createComposer({ document: new FakeDocument(), labels, onSend: (text) => sent.push(text), onStop: () => (stops += 1) });
  labels.apply(translator("en"));
  const { textarea } = composer;
  composer.value = "hello";
  assert.equal(textarea.value, "hello");
  assert.equal(textarea.dispatchEvent({ type: "keydown", key: "Enter", shiftKey: true }), true);
  assert.equal(textarea.dispatchEvent({ type: "keydown", key: "Enter", keyCode: 229 }), true);
  assert.equal(textarea.dispatchEvent({ type: "keydown", key: "a" }), true);
  assert.equal(textarea.dispatchEvent({ type: "keydown", key: "Enter" }), false);
  composer.element.querySelector("[data-role=send]").click();
  assert.deepEqual(sent, ["hello", "hello"]);
  const stop = composer.element.querySelector("[data-role=stop]");
  assert.ok(stop.hasAttribute("hidden"));
  composer.setRunning(true);
  assert.equal(stop.hasAttribute("hidden"), false);
  stop.click();
  assert.equal(stops, 1);
  composer.setRunning(true, true);
  assert.ok(stop.hasAttribute("disabled"));
  stop.click();
  assert.equal(stops, 1, "a disabled Stop does nothing");
  composer.setRunning(false);
  assert.ok(stop.hasAttribute("hidden"));
  assert.equal(stop.textContent, "Stop");
  assert.equal(textarea.getAttribute("aria-label"), "Message");
  composer.focus();
  assert.equal(textarea.ownerDocument.activeElement, textarea);
});

test("the sidebar: buttons call back, search waits for a pause, the toggles show their state", () => {
  const document = new FakeDocument();
  const labels = new Labels();
  const timers = new FakeTimers();
  const calls = [];
  const record = (name) => (...args) => calls.push([name, ...args]);
  const sidebar = createSidebar({
    document,
    labels,
    timers,
    handlers: {
      onNewSession: record("new"),
      onSearch: record("search"),
      onOpen: record("open"),
      onRename: record("rename"),
      onDelete: record("delete"),
      onLang: record("lang"),
      onTheme: record("theme"),
      onHelp: record("help"),
      onClose: record("close"),
    },
  });
  labels.apply(translator("en"));
  document.body.appendChild(sidebar.element);
  const $ = (selector) => sidebar.element.querySelector(selector);
  $("[data-role=new-session]").click();
  $("[data-role=close-menu]").click();
  $("[data-lang=zh]").click();
  $("[data-role=theme-toggle]").click();
  $("button[data-role=help]").click();
  assert.deepEqual(calls, [["new"], ["close"], ["lang", "zh"], ["theme"], ["help"]]);
  calls.length = 0;
  const search = sidebar.search;
  search.value = " tea ";
  search.dispatchEvent({ type: "input" });
  search.dispatchEvent({ type: "input" });
  assert.equal(timers.pending.size, 1, "typing restarts the wait");
  assert.equal(timers.delays.at(-1), SEARCH_DELAY_MS);
  timers.fireAll();
  assert.deepEqual(calls, [["search", "tea"]]);
  assert.equal(sidebar.query(), "tea");
  search.dispatchEvent({ type: "keydown", key: "Enter" });
  assert.equal(calls.length, 1, "the same query is not asked twice");
  const esc = { type: "keydown", key: "Escape" };
  search.dispatchEvent(esc);
  assert.deepEqual(calls.at(-1), ["search", ""]);
  assert.equal(esc.defaultPrevented, true);
  const again = { type: "keydown", key: "Escape" };
  search.dispatchEvent(again);
  assert.equal(again.defaultPrevented, false, "an empty box lets Esc close the drawer");
  search.value = "x";
  search.dispatchEvent({ type: "input" });
  sidebar.destroy();
  assert.equal(timers.pending.size, 0);
  sidebar.setLang("zh");
  assert.equal($("[data-lang=zh]").getAttribute("aria-pressed"), "true");
  assert.equal($("[data-lang=en]").getAttribute("aria-pressed"), "false");
  sidebar.setTheme("dark");
  assert.equal($("[data-role=theme-toggle]").getAttribute("aria-pressed"), "true");
  sidebar.setTheme("light");
  assert.equal($("[data-role=theme-toggle]").getAttribute("aria-pressed"), "false");
  assert.equal(search.getAttribute("type"), "search");
  assert.equal(search.getAttribute("placeholder"), "Search conversations");
});
