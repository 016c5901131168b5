"""The Jinja2 environment the HTML report is written with: every value a template outputs is
escaped, whether or not the template says so, so escaping is the default rather than a duty.

A value is escaped as before templates (html.escape, quotes included) after each character
that could hide or reorder what the reader sees (a bidi override, a control character) is
replaced (text.neutralised). Only Markup, which a template or macro made, passes as it is.
The report's templates are written indented for reading: a line break and the indentation
after it are not part of the output; a line break the page needs is written {{ NL }}. The
review page (localeval.review) is laid out as served, its line breaks kept.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from typing import Any

from jinja2 import DictLoader, Environment, StrictUndefined
from jinja2.ext import Extension
from markupsafe import Markup

from localeval.results import view
from localeval.text import neutralised


def escaped(value: Any) -> Markup:
    """Any value as HTML text or an attribute value: a template's own Markup as it is,
    anything else escaped, with what could hide or reorder text as a placeholder."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(neutralised(view.text(value)), quote=True))


class LayoutWhitespace(Extension):
    """Drops each line break of a template with the indentation that follows it."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return re.sub(r"\n[ \t]*", "", source)


def template_sources(package: str, folder: str, suffix: str) -> DictLoader:
    """A package's templates (the files in `folder` whose names end with `suffix`), read
    here, once: rendering opens no file."""
    found = resources.files(package).joinpath(folder)
    return DictLoader(
        {
            entry.name: entry.read_text(encoding="utf-8")
            for entry in found.iterdir()
            if entry.name.endswith(suffix)
        }
    )


def escaping_environment(package: str, folder: str, suffix: str, *, layout: bool) -> Environment:
    """An environment over a package's templates (the files in `folder` whose names end with
    `suffix`) that escapes every value it writes; with `layout`, a template's line breaks and
    indentation are not output."""
    return Environment(
        loader=template_sources(package, folder, suffix),
        autoescape=True,
        finalize=escaped,
        undefined=StrictUndefined,
        extensions=[LayoutWhitespace] if layout else [],
        keep_trailing_newline=not layout,
    )


ENV = escaping_environment("localeval.reports", "templates", ".j2", layout=True)


#: how deep generic details (of metrics without a layout of their own) are drawn
GENERIC_DEPTH = 4


def short_list(values: list[Any]) -> bool:
    """Whether a list of details reads best on one line: short, and nothing nested."""
    return all(not isinstance(x, dict | list) for x in values) and (
        sum(len(view.text(x)) for x in values) < 120
    )


def texts(values: list[Any]) -> list[str]:
    return [view.text(x) for x in values]


ENV.globals.update(
    NL=Markup("\n"),
    GENERIC_DEPTH=GENERIC_DEPTH,
    fmt=view.fmt,
    short_list=short_list,
    texts=texts,
)


def render(template: str, **values: Any) -> Markup:
    """A template (or one of its macros' callers) rendered with these values."""
    return Markup(ENV.get_template(template).render(**values))


def macro(template: str, name: str) -> Any:
    """A macro of a template, to call from Python; it returns Markup."""
    return getattr(ENV.get_template(template).module, name)
