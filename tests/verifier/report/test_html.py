"""index.html's navigation bar: one link per section, each landing on an id of the page."""
from __future__ import annotations

import html
import re

from verifier.report.html import with_navigation

PAGE = ("<html><body><h1>Report</h1><h2>Findings</h2><h3 id='x'>x</h3>"
        "<h2 data-group=\"First paper (A et al.)\">Statement map</h2><h2 id='paper-b' data-nav='Second paper (B)'>"
        "Second paper: a long title</h2><h2>The paper's scale: Theorem 1</h2><h2>Findings</h2></body></html>")


def test_every_section_is_linked_and_every_link_lands():
    page = with_navigation(PAGE)
    nav = re.search(r'<nav class="toc"[^>]*>(.*?)</nav>', page).group(1)
    assert page.index("</h1>") < page.index("<nav") < page.index("<h2")
    hrefs = re.findall(r'href="#([^"]+)"', nav)
    ids = re.findall(r"""\bid=["']([^"']+)["']""", page)
    assert len(hrefs) == 5 and set(hrefs) <= set(ids) and len(ids) == len(set(ids))  # unique, all found
    labels = [html.unescape(t) for t in re.findall(r">([^<]+)</a>", nav)]
    assert labels == ["Findings", "Statement map", "Second paper (B)", "The paper's scale", "Findings"]
    assert '<span class="group">First paper (A et al.):</span>' in nav
    assert hrefs[0] != hrefs[-1]  # a repeated heading gets its own id


def test_a_page_without_sections_gets_an_empty_bar():
    page = with_navigation("<h1>t</h1><p>x</p>")
    assert '<nav class="toc" id="contents" aria-label="sections"></nav>' in page
