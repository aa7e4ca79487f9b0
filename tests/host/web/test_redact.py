from __future__ import annotations

import json
import logging
import random
import secrets
import sys
from urllib.parse import quote, quote_plus

import pytest

from dsh.web.redact import REDACTED, RedactToken, TokenRedactor, redacted_logs

# Tokens a person might set with DSH_TOKEN: every character that some log form escapes.
HOSTILE = [
    "q'uote-{core}",
    'dq"uote-{core}',
    "per%cent-%41-{core}",
    "amp&er=sand-{core}",
    "sp ace s-{core}",
    "b\\ack\\slash-{core}",
    "ünï©ødé-{core}",
    "emoji😀-{core}-\u200b",
    "all'\"%& ü😀\\/-{core}",
]


def hostile(template: str) -> str:
    return template.format(core=secrets.token_hex(8))


def spellings(token: str, rng: random.Random) -> dict[str, str]:
    """The token as a log line may show it (without the quotes a repr adds around it)."""
    forms = {
        "raw": token,
        "repr": repr(token)[1:-1],
        "ascii repr": ascii(token)[1:-1],
        "json": json.dumps(token)[1:-1],
        "json unicode": json.dumps(token, ensure_ascii=False)[1:-1],
        "url": quote(token, safe=""),
        "url lower-case hex": quote(token, safe="").lower(),
        "url keeping quotes": quote(token, safe="'\"&"),
        "form": quote_plus(token),
        "url twice": quote(quote(token, safe=""), safe=""),
        "bytes repr": repr(token.encode())[2:-1],
        "repr of json": repr(json.dumps(token))[2:-2],
    }
    for number in range(5):  # character by character, a random spelling each
        forms[f"mixed {number}"] = "".join(
            rng.choice(list(spellings_of_char(char))) for char in token
        )
    return forms


def spellings_of_char(char: str) -> set[str]:
    return {
        char,
        quote(char, safe=""),
        quote(char, safe="").lower(),
        json.dumps(char)[1:-1],
        ascii(char)[1:-1],
        repr(char.encode())[2:-1],
    }


@pytest.mark.parametrize("template", HOSTILE)
def test_the_token_is_redacted_in_every_spelling_and_mixture(template: str) -> None:
    token = hostile(template)
    redact = TokenRedactor(token)
    rng = random.Random(token)
    for name, form in spellings(token, rng).items():
        assert redact(f"<{form}>") == f"<{REDACTED}>", name
        assert redact(f"a {form} b {form}") == f"a {REDACTED} b {REDACTED}", name


def test_any_run_of_eight_characters_of_the_token_is_redacted() -> None:
    token = "first-part&second part-" + secrets.token_hex(8)
    redact = TokenRedactor(token)
    split = quote(token, safe="&").replace("&", " & ")
    assert redact(f"?t={split} end") == f"?t={REDACTED} & {REDACTED} end"
    assert redact(f"<{token[3:-3]}>") == f"<{REDACTED}>"
    assert redact(f"<{json.dumps(token[5:20])[1:-1]}>") == f"<{REDACTED}>"
    assert redact("<first-p>") == "<first-p>"  # seven characters: too little to say


def test_a_short_token_is_redacted_only_whole() -> None:
    redact = TokenRedactor("tok'en")
    assert redact("a tok'en and a tok%27en") == f"a {REDACTED} and a {REDACTED}"
    assert redact("the tok and the en") == "the tok and the en"


def test_every_token_parameter_and_bearer_credential_is_redacted_even_when_wrong() -> None:
    redact = TokenRedactor("the-real-one")
    assert redact("GET /live?token=the-real&x=1") == f"GET /live?token={REDACTED}&x=1"
    assert redact("?a=1&token=a'b\"c HTTP/1.1") == f"?a=1&token={REDACTED} HTTP/1.1"
    assert redact("q=token%3Dguess%26next") == f"q=token%3D{REDACTED}%26next"
    assert redact("?access_token=abc") == f"?access_token={REDACTED}"
    assert redact("Authorization: Bearer guess") == f"Authorization: Bearer {REDACTED}"
    assert (
        redact("{'authorization': 'bearer guess'}") == f"{{'authorization': 'bearer {REDACTED}'}}"
    )
    assert redact("nothing to hide here") == "nothing to hide here"


def test_an_empty_token_cannot_be_redacted() -> None:
    with pytest.raises(ValueError, match="empty token"):
        TokenRedactor("")


def make(msg: object, *args: object, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("tests.redact", logging.ERROR, __file__, 1, msg, args, None)
    record.__dict__.update(extra)
    return record


TOKEN = "s3cr'et-ü"


def test_a_record_is_cleaned_in_its_message_arguments_and_extras() -> None:
    clean = TokenRedactor(TOKEN).clean
    record = make("%s %s %d", f"a {TOKEN}", f"b {quote(TOKEN)}", 7, color_message=TOKEN)
    clean(record)
    assert record.getMessage() == f"a {REDACTED} b {REDACTED} 7"
    assert record.__dict__["color_message"] == REDACTED
    mapping = make("%(who)s %(n)d", {"who": TOKEN, "n": 1})
    clean(mapping)
    assert mapping.getMessage() == f"{REDACTED} 1"


def test_a_token_inside_a_non_string_argument_or_message_is_rendered_and_cleaned() -> None:
    clean = TokenRedactor(TOKEN).clean
    for record in (
        make("failed: %s", ValueError(f"bad {TOKEN}")),
        make("%r", {"t": TOKEN}),
        make("%s", TOKEN.encode()),
        make(ValueError(f"bad {TOKEN}")),
    ):
        clean(record)
        message = record.getMessage()
        assert "s3cr" not in message and REDACTED in message, message
    harmless = make("%s and %d", ValueError("nothing secret"), 3)
    clean(harmless)
    assert harmless.args == (harmless.args[0], 3) and isinstance(harmless.args[0], ValueError)


def test_a_record_whose_format_is_broken_is_left_to_logging_with_clean_arguments() -> None:
    record = make("%d", TOKEN)
    TokenRedactor(TOKEN).clean(record)
    assert record.args == (REDACTED,)


def test_tracebacks_and_stacks_are_cleaned() -> None:
    try:
        raise RuntimeError(f"cannot open {TOKEN!r} or {json.dumps(TOKEN)}")
    except RuntimeError:
        record = make("boom")
        record.exc_info = sys.exc_info()
    record.stack_info = f"Stack (most recent call last):\n  token is {TOKEN}"
    TokenRedactor(TOKEN).clean(record)
    text = logging.Formatter().format(record)
    assert "RuntimeError: cannot open" in text and "most recent call last" in text
    assert "s3cr" not in text and text.count(REDACTED) == 3


def test_an_already_formatted_traceback_is_cleaned_too() -> None:
    record = make("boom")
    record.exc_text = f"Traceback ...\nKeyError: '{TOKEN}'"
    RedactToken(TOKEN).filter(record)
    assert record.exc_text == f"Traceback ...\nKeyError: '{REDACTED}'"


def test_redacted_logs_cleans_every_logger_while_active(caplog: pytest.LogCaptureFixture) -> None:
    original = logging.getLogRecordFactory()
    with caplog.at_level(logging.INFO):
        with redacted_logs(TOKEN):
            for name in ("uvicorn.error", "uvicorn.access", "asyncio", "dsh.web", "a_plugin"):
                logging.getLogger(name).info("token %s in %s", TOKEN, name)
        logging.getLogger("after").info("token %s after", TOKEN)
    assert logging.getLogRecordFactory() is original
    inside, after = caplog.records[:-1], caplog.records[-1]
    assert len(inside) == 5 and all(TOKEN not in r.getMessage() for r in inside)
    assert TOKEN in after.getMessage()


def test_a_factory_wrapped_after_ours_stays_in_place_and_ours_goes_quiet() -> None:
    original = logging.getLogRecordFactory()
    with redacted_logs(TOKEN):
        ours = logging.getLogRecordFactory()

        def wrapper(*args: object, **kwargs: object) -> logging.LogRecord:
            return ours(*args, **kwargs)

        logging.setLogRecordFactory(wrapper)
    try:
        assert logging.getLogRecordFactory() is wrapper
        record = logging.getLogger("tests.redact").makeRecord(
            "tests.redact", logging.INFO, __file__, 1, TOKEN, (), None
        )
        assert record.msg == TOKEN
    finally:
        logging.setLogRecordFactory(original)


def test_cleaning_a_record_twice_changes_nothing_more() -> None:
    record = make("failed: %s", ValueError(f"bad {TOKEN}"))
    redact = RedactToken(TOKEN)
    redact.filter(record)
    once = record.getMessage()
    assert record.args is None
    redact.filter(record)
    assert record.getMessage() == once == f"failed: bad {REDACTED}"


def test_a_format_that_names_a_token_parameter_is_rendered_not_broken() -> None:
    made = make("GET /live?token=%s from %s", "not-the-token", "127.0.0.1")
    RedactToken("s3cret-token-value").filter(made)
    assert made.getMessage() == "GET /live?token=[redacted] from 127.0.0.1"
    broken = make("token=%s and %s", "only one")
    RedactToken("s3cret-token-value").filter(broken)  # logging reports the bad format itself
    assert broken.msg == "token=[redacted] and %s" and broken.args == ("only one",)
