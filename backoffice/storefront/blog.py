"""The published blog's pages, with the post's Markdown rendered to HTML as a safe subset: headings,
paragraphs, lists, quotes, emphasis, inline code and http(s) links; any HTML the text holds is escaped."""

from __future__ import annotations

import re
from typing import Any

from pages import Page, Renderer, e, summary

_BULLET = re.compile(r"^\s*[-*]\s+")
_NUMBER = re.compile(r"^\s*\d+[.)]\s+")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^\s)]+|/[^\s)]*)\)")


def inline(text: str) -> str:
    out = e(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![*\w])\*([^*]+)\*(?!\w)", r"<em>\1</em>", out)
    return _LINK.sub(lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', out)


def markdown(text: str) -> str:
    blocks: list[str] = []
    for block in re.split(r"\n\s*\n", (text or "").replace("\r\n", "\n")):
        lines = [line.rstrip() for line in block.strip("\n").split("\n") if line.strip()]
        if not lines:
            continue
        heading = re.match(r"^(#{1,4})\s+(.*)$", lines[0])
        if heading and len(lines) == 1:
            level = min(len(heading.group(1)) + 1, 5)  # the page's title is the only h1
            blocks.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif all(_BULLET.match(line) for line in lines):
            items = "".join(f"<li>{inline(_BULLET.sub('', line))}</li>" for line in lines)
            blocks.append(f"<ul>{items}</ul>")
        elif all(_NUMBER.match(line) for line in lines):
            items = "".join(f"<li>{inline(_NUMBER.sub('', line))}</li>" for line in lines)
            blocks.append(f"<ol>{items}</ol>")
        elif all(line.startswith(">") for line in lines):
            blocks.append(
                f"<blockquote><p>{'<br>'.join(inline(line.lstrip('> ')) for line in lines)}</p></blockquote>"
            )
        else:
            blocks.append(f"<p>{'<br>'.join(inline(line) for line in lines)}</p>")
    return "\n".join(blocks)


def date(value: Any) -> str:
    return str(value or "")[:10]


def blog_pages(render: Renderer) -> list[Page]:
    posts = render.data.posts
    if not posts:
        return []
    name = render.data.store.get("name") or ""
    items = "".join(
        f'<li class="post-card"><a href="{render.link("/blog/" + p["slug"] + "/")}">'
        + (
            f'<img src="{e(render.image(p["cover_image"]))}" alt="" width="800" height="450" loading="lazy">'
            if p.get("cover_image")
            else ""
        )
        + f'<h2>{e(p["title"])}</h2></a><p class="muted"><time datetime="{e(p.get("published_at"))}">{e(date(p.get("published_at")))}</time></p>'
        f"<p>{e(p.get('excerpt') or summary(p.get('body'), 200))}</p></li>"
        for p in posts
    )
    pages = [
        Page(
            "blog/index.html",
            f"Blog | {name}",
            summary(f"Stories from {name}: " + ", ".join(p["title"] for p in posts[:8])),
            f'<h1>Blog</h1><ul class="posts" role="list">{items}</ul>',
        )
    ]
    for post in posts:
        cover = (
            f'<img class="cover" src="{e(render.image(post["cover_image"]))}" alt="" width="1200" height="675">'
            if post.get("cover_image")
            else ""
        )
        body = (
            f'<article class="post"><p class="crumbs"><a href="{render.link("/blog/")}">Blog</a></p>'
            f'<h1>{e(post["title"])}</h1><p class="muted"><time datetime="{e(post.get("published_at"))}">'
            f'{e(date(post.get("published_at")))}</time></p>{cover}<div class="prose">{markdown(post.get("body") or "")}</div></article>'
        )
        title = post.get("seo_title") or post["title"]
        description = post.get("seo_description") or post.get("excerpt") or summary(post.get("body"))
        pages.append(
            Page(
                f"blog/{post['slug']}/index.html",
                f"{title} | {name}",
                description,
                body,
                "article",
                post.get("cover_image"),
            )
        )
    return pages
