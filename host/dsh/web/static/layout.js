// The page's parts, built and put in place: the sidebar (a drawer on
// phones) with its scrim, and the main column — header, banner, transcript
// (with the new-messages pill), composer and the screen-reader announcer.

import { createAnnouncer } from "./announcer.js";
import { createBanner } from "./banner.js";
import { createComposer } from "./composer.js";
import { ConversationView } from "./conversation.js";
import { h } from "./dom.js";
import { createFollower } from "./follow.js";
import { createHeader } from "./header.js";
import { createSidebar } from "./sidebar.js";

/**
 * Build the page into `root`. `handlers` are the shell's actions, named as
 * createSidebar, createComposer and ConversationView take them; `controls`
 * go at the end of the header, `panels` (a PanelSlot's element) and `notices`
 * (more banners) above the transcript. Returns the parts and `drawer`
 * (`open(focus?)`, `close(refocus) -> bool`, `isOpen()`).
 */
export function buildLayout({ document, root, labels, registry, timers, copyText, handlers, controls = null, panels = null, notices = [] }) {
  const drawer = {
    isOpen: () => root.getAttribute("data-sidebar") === "open",
    /** Open the drawer; `focus` moves focus into it (to New session). */
    open(focus = true) {
      root.setAttribute("data-sidebar", "open");
      header.setDrawer(true);
      if (focus) sidebar.newSession.focus?.();
    },
    /** Close it; `refocus` puts focus back on the menu button. False if it was closed. */
    close(refocus) {
      if (!drawer.isOpen()) return false;
      root.setAttribute("data-sidebar", "closed");
      header.setDrawer(false);
      if (refocus) header.menu.focus?.();
      return true;
    },
  };
  const sidebar = createSidebar({ document, labels, timers, handlers: { ...handlers, onClose: () => drawer.close(true) } });
  const header = createHeader({ document, labels, onMenu: () => drawer.open(), controls });
  const banner = createBanner(document);
  const transcript = h(document, "div", { class: "transcript", "data-role": "transcript" });
  labels.attr(transcript, "aria-label", "conversation");
  const follower = createFollower({ document, labels, scroller: transcript });
  const announcer = createAnnouncer(document);
  const composer = createComposer({ document, labels, onSend: handlers.onSend, onStop: handlers.onStop });
  const conversation = new ConversationView({
    document,
    root: transcript,
    registry,
    timers,
    copyText,
    onFork: handlers.onFork,
    onRetry: handlers.onRetry,
    onLoadOlder: handlers.onLoadOlder,
    onPending: handlers.onPending,
    onRenderError: handlers.onRenderError,
  });
  const scrim = h(document, "div", { class: "scrim", "data-role": "scrim" });
  scrim.addEventListener("click", () => drawer.close(false));
  const main = h(document, "main", { class: "main" }, [
    header.element,
    banner.element,
    ...notices,
    panels,
    h(document, "div", { class: "transcript-frame" }, [transcript, follower.pill]),
    composer.element,
    announcer.element,
  ]);
  root.setAttribute("data-sidebar", "closed");
  root.replaceChildren(sidebar.element, scrim, main);
  return { sidebar, header, banner, transcript, follower, announcer, composer, conversation, drawer };
}
