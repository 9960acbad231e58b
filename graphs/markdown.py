"""Reading and rendering Markdown: fenced blocks by tag, and skill bodies as sanitized HTML.

Both go through markdown-it-py's CommonMark parser, so a fence inside a list or a blockquote, a
``~~~`` fence or a longer backtick fence is found exactly where a Markdown reader would see one, and
an example fence quoted inside another code block is not. Rendering is sanitized by nh3 (Ammonia):
nothing here decides by hand which HTML is safe.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

# Skill authors may use inline HTML (<details>, <kbd>…); the sanitizer below decides what survives.
_PARSER = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")

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


def fenced_blocks_find(text: str, *, tag: str) -> list[str]:
    """Return the contents of the fenced code blocks in ``text`` whose info string starts with ``tag``."""
    blocks = []
    for token in _PARSER.parse(text):
        if token.type == "fence" and token.info.strip().split(maxsplit=1)[:1] == [tag]:
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
