"""What every page of report.html and the viewer shares: escaping, the policy, the head.

Every text from the data goes through :func:`esc` (after
:func:`~itemscore.display._text.printable`) before it joins the markup. The policy allows the
page's one script by its SHA-256 only (no other inline script, no script file), styles inline,
images as ``data:``, and no request at all, but to the viewer that served the page when it
was served (:func:`policy`).
"""

from __future__ import annotations

import base64
import hashlib
import html

from ..display._text import printable

__all__ = ["esc", "head", "policy", "script_hash"]


def esc(text: object) -> str:
    """Text from the data, escaped for HTML markup, attributes and SVG."""
    return html.escape(printable(str(text)), quote=True)


def script_hash(script: str) -> str:
    """The policy's source expression that allows exactly ``script``: ``'sha256-...'``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def policy(*, script: str | None, connect: bool = False, forms: bool = False) -> str:
    """The Content-Security-Policy of a page.

    Args:
        script: The page's one inline script (allowed by its hash), or ``None`` for none.
        connect: Whether the page may ask the server it came from for data (the viewer).
        forms: Whether the page's forms may be sent to the server it came from (the viewer).
    """
    none, own = "'none'", "'self'"
    scripts = script_hash(script) if script is not None else none
    return (
        f"default-src {none}; style-src 'unsafe-inline'; script-src {scripts}; "
        f"img-src data:; connect-src {own if connect else none}; base-uri {none}; "
        f"form-action {own if forms else none}"
    )


def head(title: str, css: str, csp: str) -> str:
    """The document up to the opening ``<main>``: charset, policy, viewport, title, style."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{css}</style></head><body><main>"
    )
