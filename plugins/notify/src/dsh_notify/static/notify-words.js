// dsh-notify's words on the page (en and 中文, like the rest of the UI): the
// quiet line shown while a channel keeps failing.

const WORDS = {
  en: {
    phone: (time) => `Couldn't reach your phone since ${time}`,
    other: (time) => `Couldn't send notifications since ${time}`,
  },
  zh: {
    phone: (time) => `自 ${time} 起无法送达你的手机`,
    other: (time) => `自 ${time} 起无法发送通知`,
  },
};

const pad = (number) => String(number).padStart(2, "0");

/** `ms` as the reader's local "14:02", with "12-04 " before it when it is not today (`now`). */
export function clockTime(ms, now) {
  const at = new Date(ms);
  const today = new Date(now);
  const time = `${pad(at.getHours())}:${pad(at.getMinutes())}`;
  const sameDay =
    at.getFullYear() === today.getFullYear() && at.getMonth() === today.getMonth() && at.getDate() === today.getDate();
  return sameDay ? time : `${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${time}`;
}

/**
 * The status line for `/api/health`'s `notify.failing` (`{channel: epoch ms
 * since it keeps failing}`), or null when nothing fails. Web Push failing
 * speaks of the phone; any other channel of notifications in general. The
 * time is the earliest of the channels meant.
 */
export function failingText(failing, lang, now) {
  if (failing === null || typeof failing !== "object") return null;
  const since = Object.entries(failing).filter(([, ms]) => Number.isFinite(ms));
  if (since.length === 0) return null;
  const words = WORDS[lang] ?? WORDS.en;
  const phone = since.find(([channel]) => channel === "webpush");
  const earliest = phone?.[1] ?? Math.min(...since.map(([, ms]) => ms));
  return (phone === undefined ? words.other : words.phone)(clockTime(earliest, now));
}
