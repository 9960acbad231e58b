"""Reading and rendering Markdown: fenced blocks by tag, and skill bodies as sanitized HTML.

Both go through markdown-it-py's CommonMark parser, so a fence inside a list or a blockquote, a
``~~~`` fence or a longer backtick fence is found exactly where a Markdown reader would see one, and
an example fence quoted inside another code block is not. Rendering is sanitized by nh3 (Ammonia):
nothing here decides by hand which HTML is safe.
"""

from __future__ import annotations

import time
from collections.abc import Collection

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

# markdown-it spends up to 20 µs a character on hostile inline text (runs of "![" or "["): a 200,000
# character body took seconds. No paragraph of prose is this long; a longer one renders as plain text.
MAX_INLINE_CHARS = 20_000
# And once rendering a body has taken this long, its remaining paragraphs render as plain text too:
# many paragraphs just under the limit stay as quick as one.
INLINE_BUDGET_SECONDS = 0.5


def _inline_bounded(state: StateCore) -> None:
    """markdown-it's ``inline`` core rule within MAX_INLINE_CHARS per paragraph and INLINE_BUDGET_SECONDS."""
    deadline = time.monotonic() + INLINE_BUDGET_SECONDS
    for token in state.tokens:
        if token.type != "inline":
            continue
        if len(token.content) <= MAX_INLINE_CHARS and time.monotonic() < deadline:
            token.children = token.children or []
            state.md.inline.parse(token.content, state.md, state.env, token.children)
        else:
            token.children = [Token("text", "", 0, content=token.content)]


def _parser() -> MarkdownIt:
    # Skill authors may use inline HTML (<details>, <kbd>…); the sanitizer below decides what survives.
    return MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")


_PARSER = _parser()
_PARSER.core.ruler.at("inline", _inline_bounded)
# Finding fences needs the blocks only: without inline parsing it is linear and quick on any text.
_BLOCK_PARSER = _parser().disable("inline")

# Images are left out on purpose: an image pointing off-site would make every admin's browser
# fetch it while reading the skill, so a Markdown image renders as nothing.
_ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em",
        "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "ins", "kbd", "li", "ol", "p", "pre", "s",
        "samp", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr",
        "ul",
    }
)
_ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
_URL_SCHEMES = frozenset({"http", "https", "mailto"})
_LINK_REL = "noopener noreferrer nofollow"


def fenced_blocks_find(text: str, *, tags: Collection[str]) -> list[str]:
    """Return the contents of the fenced code blocks in ``text`` whose info string starts with one of ``tags``."""
    blocks = []
    for token in _BLOCK_PARSER.parse(text):
        info_words = token.info.split(maxsplit=1) if token.type == "fence" else []
        if info_words and info_words[0] in tags:
            blocks.append(token.content)
    return blocks


def markdown_render_safe(text: str) -> str:
    """Render Markdown to HTML that is safe to insert into a console page.

    Scripts, styles, event handlers, images and ``javascript:`` links are removed; every link gets
    ``rel="noopener noreferrer nofollow"``.
    """
    return nh3.clean(
        _PARSER.render(text),
        tags=set(_ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in _ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(_URL_SCHEMES),
        link_rel=_LINK_REL,
        clean_content_tags={"script", "style"},
    )
