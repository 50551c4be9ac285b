"""The pages' languages (issue 35): one message catalogue per language (``experiments/web/static/i18n/*.json``),
the same keys in all three with no empty text and the same ``{name}`` placeholders, and every key the pages use
(``t("...")``, ``data-i18n="..."`` in the static files) present. The browser side is in test_serve_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mus_env.phases import OUTCOME_NAMES, PHASE_NAMES

pytest.importorskip("starlette")
from experiments.web.app import ERROR_CODES  # noqa: E402

STATIC = Path(__file__).resolve().parents[1] / "experiments" / "web" / "static"
LANGUAGES = ("es", "en", "eu")
#: A key as the pages write it: a quoted "namespace.name" (t("play.your_turn"), a key chosen by a condition) or
#: a data-i18n* attribute's value.
NAMESPACES = ("common", "index", "play", "replay", "run", "lang", "phase", "outcome", "role", "signals", "reason",
              "player", "error", "style")
KEY = re.compile(r'["\'](?:' + "|".join(NAMESPACES) + r')\.[^"\'\s{}]+["\']')
ATTRIBUTE = re.compile(r'data-i18n(?:-title|-aria-label)?="([^"]+)"')
PLACEHOLDER = re.compile(r"\{(\w+)\}")
#: Keys chosen at run time from a text the server sends (tKnown(prefix, text)): each text of the set must have one.
SERVER_SETS = {"phase.": list(PHASE_NAMES), "outcome.": list(OUTCOME_NAMES),
               "role.": ["you", "partner", "rival"], "signals.": ["off", "truthful", "free"],
               # the parts of a hand's stones' reason (MusGame's ScoreEvent.reason, "stake+bonus"), a person's name
               "reason.": ["refused", "stake", "en paso", "bonus"], "player.": ["human"],
               "error.": list(ERROR_CODES)}


def _catalogues() -> dict[str, dict[str, str]]:
    return {lang: json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8")) for lang in LANGUAGES}


def _used_keys() -> set[str]:
    used: set[str] = set()
    for path in sorted(STATIC.glob("*.js")) + sorted(STATIC.glob("*.html")):
        text = path.read_text(encoding="utf-8")
        used.update(m.group(0)[1:-1] for m in KEY.finditer(text))
        used.update(ATTRIBUTE.findall(text))
    return used


def test_every_catalogue_has_the_same_keys_and_no_empty_text() -> None:
    cats = _catalogues()
    keys = set().union(*cats.values())
    for lang, cat in cats.items():
        assert keys - set(cat) == set(), f"{lang}.json lacks keys"
        assert [k for k, v in cat.items() if not isinstance(v, str) or not v.strip()] == [], f"{lang}.json: empty texts"
        for key, text in cat.items():
            assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(cats["en"][key])), (lang, key, text)


def test_every_key_the_pages_use_is_in_the_catalogues() -> None:
    used = _used_keys()
    assert len(used) > 150 and "play.your_turn" in used      # the pattern finds the pages' keys
    for lang, cat in _catalogues().items():
        assert sorted(used - set(cat)) == [], f"{lang}.json lacks keys the pages use"
        for prefix, texts in SERVER_SETS.items():
            assert sorted(t for t in texts if prefix + t not in cat) == [], f"{lang}.json: {prefix}* lacks these"


def test_no_catalogue_key_is_unused() -> None:
    """A key no page uses is a text nobody sees (dropped from a page, or misspelt in it)."""
    used = _used_keys() | {prefix + t for prefix, texts in SERVER_SETS.items() for t in texts}
    assert sorted(set(_catalogues()["en"]) - used) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_mus_terms_stay_the_games_own(lang: str) -> None:
    """The Mus words are the game's own in every language: mano, órdago, pares, juego, lance..."""
    cat = _catalogues()[lang]
    for key, word in [("play.mano", "mano"), ("play.pares_yes", "pares"), ("play.juego_no", "juego"),
                      ("play.ordago_decided", "órdago"), ("play.col_lance", "lance"), ("outcome.en paso", "en paso")]:
        assert word in cat[key].lower(), (lang, key)
