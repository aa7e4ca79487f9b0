// The host's own UI strings in English and 中文, and the language choice.
// Plugins translate their own strings; they read the language from the
// registry (`registry.lang()`) or from `ctx.lang`.

export const LANGUAGES = Object.freeze(["en", "zh"]);

/** localStorage key holding the reader's choice. */
export const LANG_KEY = "dsh.lang";

export const STRINGS = Object.freeze({
  en: Object.freeze({
    appName: "dsh",
    sessions: "Conversations",
    newSession: "New conversation",
    noSessions: "No conversations yet.",
    sessionNotHere: "This host has no conversation {id}: it was deleted, or it is kept by another dsh web (another data dir).",
    noSessionsLocked: "Your conversations show here once this page has its access token (above).",
    newSessionLocked: "Needs the access token first",
    noMatches: "No conversation matches “{query}”.",
    searchPlaceholder: "Search conversations",
    searchLabel: "Search conversations by title or first message",
    open: "open",
    closed: "closed",
    openHint: "Its assistant is running",
    closedHint: "Its assistant is not running; sending a message starts it again",
    fork: "Fork",
    forkMark: "fork",
    forkOf: "fork of “{name}”",
    activeNow: "active just now",
    activeMinutes: "active {n} min ago",
    activeHours: "active {n} h ago",
    activeOn: "active {date}",
    unreadCount: "{n} unread",
    unreadOne: "1 unread",
    rename: "Rename",
    renameLabel: "Conversation title",
    delete: "Delete",
    deleteTitle: "Delete this conversation?",
    deleteQuestion: "“{name}” will leave the list.",
    deleteHint: "Its log is kept in the data folder's trash; {command} brings it back.",
    deleteStops: "Its {n} pending reminders stop.",
    deleteStopsOne: "Its pending reminder stops.",
    undoDeleted: "“{name}” deleted.",
    undo: "Undo",
    cancel: "Cancel",
    close: "Close",
    closeDialog: "Close dialog",
    menu: "Conversations",
    closeMenu: "Close",
    pickSession: "Pick a conversation or start a new one.",
    emptyTranscript: "Say something to begin.",
    coldNotice: "This conversation is closed. Sending a message opens it again.",
    conversation: "Conversation",
    newMessages: "New messages ↓",
    composerPlaceholder: "Message…",
    composerLabel: "Message",
    composerHint: "Enter to send, Shift+Enter for a new line",
    send: "Send",
    stop: "Stop",
    stopHint: "Stop the running turn",
    you: "You",
    assistant: "Assistant",
    followupFrom: "Message from {source}",
    followupSummary: "Text the assistant was given",
    pluginEvent: "{type}",
    pending: "sending…",
    queued: "queued, waiting to be stored…",
    failed: "Not sent: {message}",
    notStored: "Not stored: {message}",
    offline: "dsh web did not answer (is it running?)",
    lostRestart: "the conversation stopped before it was stored",
    lostTurn: "the turn ended before it was stored",
    retry: "Retry",
    edit: "Edit",
    dismiss: "Dismiss",
    typing: "typing…",
    reasoningLive: "Thinking…",
    reasoningLiveFor: "Thinking… {n} s",
    reasoningDone: "Thoughts",
    reasoningDoneFor: "Thought for about {n} s",
    toolCall: "Tool call: {name}",
    toolDone: "done",
    toolFailed: "failed",
    toolError: "{name} failed",
    stepFailed: "The assistant could not finish a step: {message}",
    stepFailedBare: "The assistant could not finish a step.",
    errorDetails: "Details for developers",
    errorCode: "Error code",
    noResult: "waiting for result",
    arguments: "Arguments",
    result: "Result",
    turnError: "The assistant could not answer: {message}",
    turnErrorBare: "The assistant could not answer.",
    modelUnreachable: "The model could not be reached. Check your connection or the model settings.",
    modelRateLimited: "The model is busy right now (too many requests). Try again in a moment.",
    modelAuthFailed: "The model did not accept its key. Check the model settings.",
    retryTurnHint: "Send your last message again",
    forkHere: "Fork: a new conversation from here",
    copy: "Copy",
    copied: "Copied",
    copyFailed: "Copy failed",
    copyCode: "Copy code",
    copyMessage: "Copy message",
    messageActions: "Message actions",
    today: "Today",
    yesterday: "Yesterday",
    loadOlder: "Load earlier messages",
    loadingOlder: "Loading…",
    connecting: "Connecting…",
    reconnecting: "Reconnecting…",
    failedStatus: "Disconnected: {message}",
    rawEvent: "{type} (raw)",
    noToken: "No access token. Open the address printed by `dsh web` (it ends with ?token=…).",
    tokenRefused:
      "dsh web refused this page's access token: it was probably restarted with a new one (--new-token, another data dir or DSH_TOKEN). Paste the address it printed, or the token alone, to carry on without reloading.",
    tokenMissing: "This page has no access token. Paste the address `dsh web` printed (it ends with ?token=…), or the token alone.",
    tokenPlaceholder: "{origin}/?token=…",
    tokenLabel: "The address dsh web printed, or its access token",
    tokenUse: "Use it",
    tokenUnreadable: "That is neither an address with ?token=… nor a token.",
    tokenRefusedAgain: "dsh web refused that token too. Copy the address from the window where dsh web runs.",
    notifyMe: "Notify me",
    notifyOn: "Notifying",
    notifyBlocked: "Notifications blocked",
    notifyHint: "Show a system notification when a reminder fires while you are elsewhere",
    notifyOnHint: "Notifications are on for reminders that fire while you are elsewhere; click to turn them off",
    notifyBlockedHint: "The browser blocks notifications for this page: allow them in its site settings",
    soundOff: "Sound off",
    soundOn: "Sound on",
    soundHint: "Play a short sound when a reminder fires while you are elsewhere",
    error: "Something went wrong: {message}",
    unsupported: "This dsh web cannot {feature} yet (it answered {status}): update dsh.",
    featureRename: "rename conversations",
    featureDelete: "delete conversations",
    featureRestore: "bring deleted conversations back",
    featureStop: "stop a running turn",
    language: "Language",
    darkMode: "Dark mode",
    helpTitle: "Keyboard shortcuts",
    "shortcut.search": "Search conversations",
    "shortcut.new-session": "New conversation",
    "shortcut.focus-composer": "Write a message",
    "shortcut.send": "Send the message",
    "shortcut.newline": "New line in the message",
    "shortcut.rename": "Rename the conversation in focus in the list",
    "shortcut.delete": "Delete the conversation in focus in the list (it asks first)",
    "shortcut.help": "Show this help",
    "shortcut.escape": "Close the drawer, a menu or a dialog",
  }),
  zh: Object.freeze({
    appName: "dsh",
    sessions: "对话",
    newSession: "新建对话",
    noSessions: "还没有对话。",
    sessionNotHere: "这个主机上没有对话 {id}：它已被删除，或保存在另一个 dsh web（另一个数据目录）中。",
    noSessionsLocked: "本页获得访问令牌（见上方）后，这里会列出你的对话。",
    newSessionLocked: "需要先提供访问令牌",
    noMatches: "没有与“{query}”匹配的对话。",
    searchPlaceholder: "搜索对话",
    searchLabel: "按标题或第一条消息搜索对话",
    open: "已打开",
    closed: "已关闭",
    openHint: "它的助手正在运行",
    closedHint: "它的助手没有运行；发送消息会重新启动它",
    fork: "派生",
    forkMark: "派生",
    forkOf: "派生自“{name}”",
    activeNow: "刚刚活跃",
    activeMinutes: "{n} 分钟前活跃",
    activeHours: "{n} 小时前活跃",
    activeOn: "活跃于 {date}",
    unreadCount: "{n} 条未读",
    unreadOne: "1 条未读",
    rename: "重命名",
    renameLabel: "对话标题",
    delete: "删除",
    deleteTitle: "删除此对话？",
    deleteQuestion: "“{name}”将从列表中移除。",
    deleteHint: "它的日志保存在数据目录的回收站中；{command} 可以恢复。",
    deleteStops: "它待发的 {n} 个提醒将停止。",
    deleteStopsOne: "它待发的 1 个提醒将停止。",
    undoDeleted: "“{name}”已删除。",
    undo: "撤销",
    cancel: "取消",
    close: "关闭",
    closeDialog: "关闭对话框",
    menu: "对话",
    closeMenu: "关闭",
    pickSession: "选择一个对话，或新建一个。",
    emptyTranscript: "说点什么开始吧。",
    coldNotice: "此对话已关闭。发送消息会重新打开它。",
    conversation: "对话",
    newMessages: "新消息 ↓",
    composerPlaceholder: "输入消息…",
    composerLabel: "消息",
    composerHint: "Enter 发送，Shift+Enter 换行",
    send: "发送",
    stop: "停止",
    stopHint: "停止正在进行的回合",
    you: "你",
    assistant: "助手",
    followupFrom: "来自 {source} 的消息",
    followupSummary: "发给助手的原文",
    pluginEvent: "{type}",
    pending: "发送中…",
    queued: "已排队，等待保存…",
    failed: "未发送：{message}",
    notStored: "未保存：{message}",
    offline: "dsh web 没有响应（它在运行吗？）",
    lostRestart: "对话在保存它之前停止了",
    lostTurn: "回合在保存它之前结束了",
    retry: "重试",
    edit: "编辑",
    dismiss: "关闭",
    typing: "正在输入…",
    reasoningLive: "思考中…",
    reasoningLiveFor: "思考中… {n} 秒",
    reasoningDone: "思考过程",
    reasoningDoneFor: "思考了约 {n} 秒",
    toolCall: "工具调用：{name}",
    toolDone: "完成",
    toolFailed: "失败",
    toolError: "{name} 失败",
    stepFailed: "助手有一步没能完成：{message}",
    stepFailedBare: "助手有一步没能完成。",
    errorDetails: "开发者详情",
    errorCode: "错误代码",
    noResult: "等待结果",
    arguments: "参数",
    result: "结果",
    turnError: "助手没能回答：{message}",
    turnErrorBare: "助手没能回答。",
    modelUnreachable: "无法连接到模型。请检查网络连接或模型设置。",
    modelRateLimited: "模型现在太忙（请求过多）。请稍后再试。",
    modelAuthFailed: "模型没有接受密钥。请检查模型设置。",
    retryTurnHint: "再次发送你的上一条消息",
    forkHere: "派生：从这里开始一个新对话",
    copy: "复制",
    copied: "已复制",
    copyFailed: "复制失败",
    copyCode: "复制代码",
    copyMessage: "复制消息",
    messageActions: "消息操作",
    today: "今天",
    yesterday: "昨天",
    loadOlder: "加载更早的消息",
    loadingOlder: "加载中…",
    connecting: "连接中…",
    reconnecting: "正在重新连接…",
    failedStatus: "已断开：{message}",
    rawEvent: "{type}（原始数据）",
    noToken: "缺少访问令牌。请打开 `dsh web` 打印的地址（以 ?token=… 结尾）。",
    tokenRefused:
      "dsh web 拒绝了本页的访问令牌：它可能用新令牌重启了（--new-token、换了数据目录或 DSH_TOKEN）。粘贴它打印的地址（或只粘贴令牌），无需刷新即可继续。",
    tokenMissing: "本页没有访问令牌。请粘贴 `dsh web` 打印的地址（以 ?token=… 结尾），或只粘贴令牌。",
    tokenPlaceholder: "{origin}/?token=…",
    tokenLabel: "dsh web 打印的地址，或它的访问令牌",
    tokenUse: "使用",
    tokenUnreadable: "这既不是带 ?token=… 的地址，也不是令牌。",
    tokenRefusedAgain: "dsh web 也拒绝了这个令牌。请从运行 dsh web 的窗口复制地址。",
    notifyMe: "通知我",
    notifyOn: "通知已开",
    notifyBlocked: "通知已被阻止",
    notifyHint: "你不在本页时提醒触发，就显示系统通知",
    notifyOnHint: "你不在本页时触发的提醒会发出通知；点击关闭",
    notifyBlockedHint: "浏览器阻止了本页的通知：请在网站设置中允许",
    soundOff: "声音关",
    soundOn: "声音开",
    soundHint: "你不在本页时提醒触发，就播放一声短提示音",
    error: "出错了：{message}",
    unsupported: "此 dsh web 还不能{feature}（它的回应是 {status}）：请更新 dsh。",
    featureRename: "重命名对话",
    featureDelete: "删除对话",
    featureRestore: "恢复已删除的对话",
    featureStop: "停止正在进行的回合",
    language: "语言",
    darkMode: "深色模式",
    helpTitle: "键盘快捷键",
    "shortcut.search": "搜索对话",
    "shortcut.new-session": "新建对话",
    "shortcut.focus-composer": "输入消息",
    "shortcut.send": "发送消息",
    "shortcut.newline": "在消息中换行",
    "shortcut.rename": "重命名列表中选中的对话",
    "shortcut.delete": "删除列表中选中的对话（会先确认）",
    "shortcut.help": "显示此帮助",
    "shortcut.escape": "关闭抽屉、菜单或对话框",
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

/**
 * The translated strings of a piece of UI: register elements whose text (or
 * an attribute) is a key, then `apply(t)` on every language change.
 * `params` may be a function, read at each apply.
 */
export class Labels {
  #entries = [];

  text(element, key, params) {
    this.#entries.push({ element, key, attr: null, params });
    return element;
  }

  attr(element, attr, key, params) {
    this.#entries.push({ element, key, attr, params });
    return element;
  }

  apply(t) {
    for (const { element, key, attr, params } of this.#entries) {
      const value = t(key, typeof params === "function" ? params() : params);
      if (attr === null) element.textContent = value;
      else element.setAttribute(attr, value);
    }
  }
}
