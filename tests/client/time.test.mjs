import assert from "node:assert/strict";
import { test } from "node:test";

import { createTimeFormat, localeFor, previousDay, readerZone } from "../../host/dsh/web/static/time.js";
import { translator } from "../../host/dsh/web/static/i18n.js";

const t = translator("en");

test("the locale is the reader's own variant of the UI language", () => {
  assert.equal(localeFor("en", ["de-DE", "en-GB"]), "en-GB");
  assert.equal(localeFor("zh", ["zh-TW", "en"]), "zh-TW");
  assert.equal(localeFor("zh", ["en-GB"]), "zh-CN");
  assert.equal(localeFor("en", "not a list"), "en-US");
});

test("times are formatted in the given zone", () => {
  const utc = createTimeFormat({ locale: "en-GB", timeZone: "UTC" });
  const tokyo = createTimeFormat({ locale: "en-GB", timeZone: "Asia/Tokyo" });
  const ms = Date.UTC(2026, 2, 3, 22, 5, 9);
  assert.equal(utc.clock(ms), "22:05");
  assert.equal(tokyo.clock(ms), "07:05");
  assert.equal(utc.dayKey(ms), "2026-03-03");
  assert.equal(tokyo.dayKey(ms), "2026-03-04");
  assert.match(utc.full(ms), /Tue,? 3 Mar 2026.*22:05:09 UTC/);
  assert.match(utc.short(ms), /3 Mar, 22:05/);
  assert.equal(tokyo.timeZone, "Asia/Tokyo");
});

test("an unknown zone or locale falls back instead of failing", () => {
  const format = createTimeFormat({ locale: "not a locale!", timeZone: "Mars/Olympus" });
  assert.equal(format.timeZone, undefined);
  assert.equal(typeof format.clock(0), "string");
});

test("day labels: today, yesterday (by the calendar, across DST), else the date", () => {
  const ny = createTimeFormat({ locale: "en-US", timeZone: "America/New_York" });
  // 2026-03-08 is the spring-forward day in New York: 23 hours long.
  const now = Date.UTC(2026, 2, 9, 4, 30); // 00:30 on 9 March, local
  assert.equal(ny.dayLabel(Date.UTC(2026, 2, 9, 4, 0), now, t), "Today");
  assert.equal(ny.dayLabel(Date.UTC(2026, 2, 8, 5, 30), now, t), "Yesterday");
  assert.equal(ny.dayLabel(Date.UTC(2026, 2, 7, 12), now, t), "Sat, Mar 7");
  assert.equal(ny.dayLabel(Date.UTC(2025, 11, 31, 12), now, t), "Wed, Dec 31, 2025");
  assert.equal(createTimeFormat({ locale: "zh-CN", timeZone: "UTC" }).dayLabel(now, now, translator("zh")), "今天");
  assert.equal(previousDay("2026-03-01"), "2026-02-28");
  assert.equal(previousDay("2024-03-01"), "2024-02-29");
});

test("the reader's zone comes from Intl, and is undefined when Intl has none", () => {
  assert.equal(typeof readerZone(), "string");
  assert.equal(readerZone({ DateTimeFormat: () => ({ resolvedOptions: () => ({}) }) }), undefined);
  assert.equal(
    readerZone({
      DateTimeFormat: () => {
        throw new Error("no Intl");
      },
    }),
    undefined,
  );
});
