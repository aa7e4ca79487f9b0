"""Answers as models write them, in Debian's Chromium against a real `dsh web`: math
(inline and display, as MathML), a table and code from a scripted model; and an answer
streamed by a slow model, whose half-written formula and table header stay plain text
until the rest arrives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.webhost import WebHost

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send, slow_model, write_script

pytestmark = pytest.mark.browser

ANSWER = r"""Euler's identity $e^{i\pi} + 1 = 0$ costs $5 to learn, \(a_1\) too.

$$
\int_0^1 x^2\,dx = \frac{1}{3}
$$

| x | x² |
|--:|---:|
| 2 | 4  |

```python
print("done")
```

Broken: $\frac{1$ and $\href{javascript:alert(1)}{click}$.
"""


def test_math_tables_and_code_render_as_their_elements(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.json", [{"text": ANSWER}])
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        new_session(page, web)
        send(page, "show me math")
        answer = page.locator('[data-event-type="message/assistant"] [data-role=answer]')
        expect(answer).to_have_count(1, timeout=WAIT_MS)

        maths = answer.locator("math")
        expect(maths).to_have_count(4)
        expect(answer.locator(".math-block > math[display=block]")).to_have_count(1)
        expect(answer.locator("math mfrac")).to_have_count(1)
        namespace = maths.first.evaluate("(el) => el.namespaceURI")
        assert namespace == "http://www.w3.org/1998/Math/MathML"
        # MathML is laid out by the browser: the fraction is taller than a line of text.
        box = answer.locator(".math-block math").bounding_box()
        assert box is not None and box["height"] > 20, box
        expect(answer.locator("table th")).to_have_text(["x", "x²"])
        expect(answer.locator("table td.align-right")).to_have_text(["2", "4"])
        expect(answer.locator("pre code.language-python")).to_have_text('print("done")')
        expect(answer.locator("code.math-source")).to_have_text([r"$\frac{1$"])
        assert "costs $5 to learn" in (answer.text_content() or "")
        assert page.locator("a[href^=javascript]").count() == 0
        # Whatever the TeX asked for, no link, action or style reached the MathML.
        hostile = "math [*|href], math maction, math [actiontype], math [style], math [class]"
        assert answer.locator(hostile).count() == 0
        assert watch.problems == []


def test_a_streamed_formula_and_table_stay_text_until_they_are_whole(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    with slow_model() as model:
        model.first = "| a | b |\n|--\n\n$$\n\\frac{x_1}{y_1"
        model.rest = "}\n$$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        env = {"DSH_MODEL_BASE_URL": model.base_url, "DSH_MODEL": "slow", "DSH_API_KEY": ""}
        with WebHost.start(tmp_path / "data", model="openai", extra_env=env) as web:
            new_session(page, web)
            send(page, "stream it")
            typing = page.locator("[data-role=typing]")
            expect(typing.locator("pre.math-source")).to_have_text(
                "$$\n\\frac{x_1}{y_1", timeout=WAIT_MS
            )
            assert typing.locator("math, table, h1, h2, em").count() == 0

            model.finish()
            answer = page.locator('[data-event-type="message/assistant"] [data-role=answer]')
            expect(answer.locator(".math-block math mfrac")).to_have_count(1, timeout=WAIT_MS)
            expect(answer.locator("table td")).to_have_text(["1", "2"])
            assert watch.problems == []
