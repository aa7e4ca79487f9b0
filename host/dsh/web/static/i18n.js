// The host's own UI strings in English and 中文, and the language choice.
// Plugins translate their own strings; they read the language from the
// registry (`registry.lang()`) or from `ctx.lang`.

export const LANGUAGES = Object.freeze(["en", "zh"]);

/** localStorage key holding the reader's choice. */
export const LANG_KEY = "dsh.lang";

export const STRINGS = Object.freeze({
  en: Object.freeze({
    appName: "dsh",
    sessions: "Sessions",
    newSession: "New session",
    noSessions: "No sessions yet.",
    live: "live",
    cold: "cold",
    forkOf: "fork of {id}",
    events: "{n} events",
    oneEvent: "1 event",
    menu: "Sessions",
    closeMenu: "Close",
    pickSession: "Pick a session or start a new one.",
    emptyTranscript: "Say something to begin.",
    coldNotice: "This session is cold. Sending a message resumes it.",
    composerPlaceholder: "Message…",
    composerHint: "Enter to send, Shift+Enter for a new line",
    send: "Send",
    you: "You",
    assistant: "Assistant",
    fromPlugin: "from {source}",
    pending: "sending…",
    queued: "queued",
    failed: "not sent: {message}",
    dismiss: "Dismiss",
    typing: "typing…",
    reasoningLive: "Thinking…",
    reasoningLiveFor: "Thinking… {n} s",
    reasoningDone: "Thoughts",
    reasoningDoneFor: "Thought for about {n} s",
    toolCall: "Tool call: {name}",
    toolResult: "Result of {name}",
    toolError: "{name} failed",
    noResult: "waiting for result",
    arguments: "Arguments",
    turnError: "The turn failed: {message}",
    fork: "Fork",
    forkHere: "Fork a new session from here",
    loadOlder: "Load earlier events",
    loadingOlder: "Loading…",
    connecting: "Connecting…",
    reconnecting: "Reconnecting…",
    failedStatus: "Disconnected: {message}",
    rawEvent: "{type} (raw)",
    noToken: "No access token. Open the address printed by `dsh web` (it ends with ?token=…).",
    unauthorized: "The access token was refused. Open the address printed by `dsh web` again.",
    error: "Something went wrong: {message}",
    language: "Language",
  }),
  zh: Object.freeze({
    appName: "dsh",
    sessions: "会话",
    newSession: "新建会话",
    noSessions: "还没有会话。",
    live: "运行中",
    cold: "已停止",
    forkOf: "派生自 {id}",
    events: "{n} 条事件",
    oneEvent: "1 条事件",
    menu: "会话",
    closeMenu: "关闭",
    pickSession: "选择一个会话，或新建一个。",
    emptyTranscript: "说点什么开始吧。",
    coldNotice: "此会话已停止。发送消息会恢复它。",
    composerPlaceholder: "输入消息…",
    composerHint: "Enter 发送，Shift+Enter 换行",
    send: "发送",
    you: "你",
    assistant: "助手",
    fromPlugin: "来自 {source}",
    pending: "发送中…",
    queued: "已排队",
    failed: "未发送：{message}",
    dismiss: "关闭",
    typing: "正在输入…",
    reasoningLive: "思考中…",
    reasoningLiveFor: "思考中… {n} 秒",
    reasoningDone: "思考过程",
    reasoningDoneFor: "思考了约 {n} 秒",
    toolCall: "工具调用：{name}",
    toolResult: "{name} 的结果",
    toolError: "{name} 失败",
    noResult: "等待结果",
    arguments: "参数",
    turnError: "本轮失败：{message}",
    fork: "派生",
    forkHere: "从这里派生一个新会话",
    loadOlder: "加载更早的事件",
    loadingOlder: "加载中…",
    connecting: "连接中…",
    reconnecting: "正在重新连接…",
    failedStatus: "已断开：{message}",
    rawEvent: "{type}（原始数据）",
    noToken: "缺少访问令牌。请打开 `dsh web` 打印的地址（以 ?token=… 结尾）。",
    unauthorized: "访问令牌被拒绝。请重新打开 `dsh web` 打印的地址。",
    error: "出错了：{message}",
    language: "语言",
  }),
});

/** "en" or "zh" for any language tag; unknown tags fall back to English. */
export function normalizeLang(tag) {
  return typeof tag === "string" && tag.toLowerCase().startsWith("zh") ? "zh" : "en";
}

/**
 * A translator for `lang`: `t(key, params)` fills `{name}` placeholders from
 * `params`; an unknown key falls back to English, then to the key itself.
 */
export function translator(lang) {
  const table = STRINGS[normalizeLang(lang)];
  return function t(key, params = {}) {
    const template = table[key] ?? STRINGS.en[key] ?? key;
    return template.replace(/\{(\w+)\}/g, (whole, name) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
  };
}

/** The saved choice, else the browser's preference, else English. */
export function initialLang(storage, navigatorLanguages = []) {
  let saved = null;
  try {
    saved = storage?.getItem(LANG_KEY) ?? null;
  } catch {
    // Storage can be disabled; the choice just won't persist.
  }
  if (LANGUAGES.includes(saved)) return saved;
  const preferred = Array.isArray(navigatorLanguages) ? navigatorLanguages[0] : undefined;
  return normalizeLang(preferred);
}

/** Persist the choice; returns the normalized language. */
export function saveLang(storage, lang) {
  const value = normalizeLang(lang);
  try {
    storage?.setItem(LANG_KEY, value);
  } catch {
    // See initialLang.
  }
  return value;
}
