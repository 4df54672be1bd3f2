"""Every HTML page of the built book, opened in headless Chromium (see conftest.py for how to run).

For each page: it loads without console errors, failed requests or any request off 127.0.0.1;
every image has loaded; every formula is typeset by MathJax; no "??", unresolved reference or
error traceback shows; the header has the download and launch buttons its kind of page needs; the
page is no wider than the window (wide tables scroll inside the text column); every page with a
source ends in the stamp of the code that computed it, with the digest of rbdyn's sources now.
A full-page screenshot goes to ``_build/screenshots/<page path without .html>.png`` (taken before
the checks, so a failing page has one too). All failed checks of a page are reported together.
"""

import re
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit

import pytest

# ================================================================ what the pages must show
# Everything a change of theme or of the book may require adapting is in this block.

# Header buttons of sphinx-book-theme 1.3: each header_buttons group renders as
# <div class="dropdown dropdown-<label>"> with items <a|button class="btn ... btn-<label>">.
# The download group (label "download-buttons", html_theme_options.use_download_button) has
# "download-source-button" (.md), "download-pdf-button" and, when the page context has an
# ipynb_source, "download-notebook-button" (.ipynb; the theme sets it only for notebook pages with a
# launch provider configured, an extension may set it too). The launch group ("launch-buttons")
# has one entry per provider (Binder, JupyterHub, Colab, ... or one an extension adds).
BUTTONS = {
    "download .md": ".article-header-buttons .dropdown-download-buttons a.btn-download-source-button[href$='.md']",
    "download .ipynb": ".article-header-buttons .dropdown-download-buttons a.btn-download-notebook-button[href$='.ipynb']",
    "launch": ".article-header-buttons .dropdown-launch-buttons .dropdown-menu :is(a, button)",
}
# Download entries whose link must also be served (HTTP 200) by the build.
DOWNLOADS = ("download .md", "download .ipynb")

# Which buttons each kind of page needs (see page_kind): a notebook page (MyST notebook, i.e.
# front matter with a kernelspec) can be run, so it needs the launch entry and both downloads; a
# text page (a source without code: intro, api, references) only the .md download; pages Sphinx
# generates (index, search, module index) have no source and no buttons.
REQUIRED_BUTTONS = {
    "notebook": ("download .md", "download .ipynb", "launch"),
    "text": ("download .md",),
    "generated": (),
}
GENERATED_PAGE = re.compile(r"^(genindex|search|[a-z]+-modindex)\.html$|^_modules/")

# Hosts a page may load anything from: the test's own server only.
LOCAL_HOSTS = {"127.0.0.1"}

# Raw TeX delimiters that must not survive typesetting (in the visible text outside code).
RAW_TEX = ("\\(", "\\[", "$$")
# Text of failed references: Sphinx's "??" (numref/eq without a number), MyST/Sphinx roles that
# were never parsed, and what some extensions print for a missing label or glue key.
UNRESOLVED_TEXT = (
    "??", "undefined label", "{ref}", "{numref}", "{eq}", "{doc}", "{cite", "{glue", "{term}",
    "{download}",
)
# Unresolved cross-references render as an element with class "xref" outside any <a>. Python
# references to objects outside rbdyn (numpy.ndarray, float, array_like, ...) cannot resolve
# offline (no intersphinx; _config.yml nitpick-ignores them) and are expected to stay plain text.
XREF_EXPECTED_UNLINKED = re.compile(r"\bpy\b")
XREF_MUST_LINK = re.compile(r"^~?rbdyn(\.|$)")
TRACEBACK_TEXT = "Traceback (most recent call last)"
ERROR_OUTPUTS = ".output.traceback, .output.stderr"  # failures if their text has "Error"

# The checks, in the order a page's failures are reported.
CHECKS = ("load", "network", "requests", "console", "images", "math", "references", "tracebacks", "buttons", "width",
          "stamp")
STAMP = ".rbdyn-stamp"

TIMEOUT_MS = 15_000  # navigation, MathJax, images: per step
# ================================================================================================

META_REFRESH = re.compile(
    r"""<meta\s+http-equiv=["']refresh["']\s+content=["']\s*\d+\s*;\s*url=([^"']+)["']""", re.I
)

WAIT_FOR_MATHJAX = """async (timeoutMs) => {
    const mj = window.MathJax;
    if (!mj || !mj.startup || !mj.startup.promise) return null;
    const timeout = new Promise(resolve => setTimeout(() => resolve("timeout"), timeoutMs));
    const done = mj.startup.promise.then(() => "done", e => "error: " + e);
    const state = await Promise.race([done, timeout]);
    if (document.fonts) await Promise.race([document.fonts.ready, timeout]);
    return {state: state, version: mj.version || null};
}"""

WAIT_FOR_IMAGES = """async (timeoutMs) => {
    const images = [...document.images];
    for (const img of images) if (img.loading === "lazy") img.loading = "eager";
    const settled = images.map(img => img.complete ? null : new Promise(resolve => {
        img.addEventListener("load", resolve, {once: true});
        img.addEventListener("error", resolve, {once: true});
    }));
    const timeout = new Promise(resolve => setTimeout(resolve, timeoutMs));
    await Promise.race([Promise.all(settled), timeout]);
    return images.map(img => ({
        src: img.getAttribute("src"), url: img.currentSrc || img.src,
        complete: img.complete, width: img.naturalWidth,
    }));
}"""

INSPECT = """([errorOutputs]) => {
    const snippet = (s, n) => s.replace(/\\s+/g, " ").trim().slice(0, n);
    const math = [...document.querySelectorAll(".math")];
    return {
        text: document.body.innerText,
        math: math.length,
        mjx: document.querySelectorAll("mjx-container").length,
        untypeset: math.filter(m => !m.querySelector("mjx-container"))
                        .map(m => snippet(m.textContent, 80)),
        mathErrors: [...document.querySelectorAll("mjx-merror")]
                        .map(e => e.getAttribute("data-mjx-error") || snippet(e.textContent, 80)),
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
        stamp: [...document.querySelectorAll(".rbdyn-stamp")].map(e => e.innerText),
        unlinkedXrefs: [...document.querySelectorAll(".xref")].filter(e => !e.closest("a"))
                        .map(e => ({text: snippet(e.textContent, 80), cls: e.className})),
        errorOutputs: [...document.querySelectorAll(errorOutputs)]
                        .map(e => ({cls: e.className, text: e.innerText})),
    };
}"""

# innerText without code (pre, code, highlighted blocks): what the reader sees as prose and math.
PROSE_TEXT = """() => {
    const style = document.createElement("style");
    style.textContent = "pre, code, .highlight, .cell_input { display: none !important; }";
    document.head.appendChild(style);
    const text = document.body.innerText;
    style.remove();
    return text;
}"""


def page_kind(book_html, rel):
    """"generated", "notebook" or "text" (see REQUIRED_BUTTONS)."""
    if GENERATED_PAGE.search(rel):
        return "generated"
    stem = rel[: -len(".html")]
    if (book_html / "_sources" / f"{stem}.ipynb").exists():
        return "notebook"
    if (book_html.parent / "jupyter_execute" / f"{stem}.ipynb").exists():
        return "notebook"
    for source in (book_html / "_sources").glob(f"{stem}.*"):
        text = source.read_text(encoding="utf-8", errors="replace")
        end = text.find("\n---", 3) if text.startswith("---") else -1
        if end > 0 and re.search(r"^kernelspec\s*:", text[3:end], re.M):
            return "notebook"
    return "text"


def rbdyn_digest():
    """The short digest of rbdyn's sources now (what ``rbdyn --version`` prints)."""
    from rbdyn import _stamp

    return _stamp.short_digest()


def around(text, index, width=40):
    start = max(0, index - width)
    return text[start : index + width].replace("\n", " ").strip()


def occurrences(text, needle, limit=3):
    found, start = [], 0
    while len(found) < limit:
        index = text.find(needle, start)
        if index < 0:
            break
        found.append(f"{needle!r} in ...{around(text, index)}...")
        start = index + len(needle)
    return found


def http_status(url):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


class Findings:
    """Failed checks of one page: check name -> messages."""

    def __init__(self):
        self.by_check = {}

    def add(self, check, message):
        messages = self.by_check.setdefault(check, [])
        if message not in messages:
            messages.append(message)

    def report(self, page_path, kind, screenshot):
        checks = sorted(self.by_check, key=lambda c: CHECKS.index(c) if c in CHECKS else len(CHECKS))
        lines = [f"{page_path}: {', '.join(checks)} ({kind} page; screenshot {screenshot})"]
        for check in checks:
            messages = self.by_check[check]
            shown = messages[:8] + ([f"... and {len(messages) - 8} more"] if len(messages) > 8 else [])
            lines += [f"  [{check}] {m}" for m in shown]
        return "\n".join(lines)


def test_page(page_path, prerequisite_problems, book_html, screenshot_dir, request):
    if prerequisite_problems:
        pytest.fail("\n".join(prerequisite_problems), pytrace=False)
    base = request.getfixturevalue("book_server")
    page = request.getfixturevalue("page")  # pytest-playwright: a fresh context per test
    page.set_default_timeout(TIMEOUT_MS)
    found = Findings()

    # -- network: everything off 127.0.0.1 is blocked and reported; failures of local requests too
    blocked = set()

    def route(route):
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOCAL_HOSTS:
            blocked.add(url)
            found.add("network", f"request off 127.0.0.1 (blocked): {url}")
            route.abort("blockedbyclient")
        else:
            route.continue_()

    page.context.route("**/*", route)
    console, failed = [], []
    page.on("console", lambda msg: msg.type == "error" and console.append(msg))
    page.on("pageerror", lambda error: found.add("console", f"uncaught exception: {error}"))
    page.on("requestfailed", lambda req: failed.append((req.url, req.failure)))
    page.on("response", lambda resp: resp.status >= 400
            and found.add("requests", f"HTTP {resp.status} {resp.url}"))

    # -- load (following a meta refresh such as index.html -> book/intro.html)
    url = urljoin(base, page_path)
    response = page.goto(url, wait_until="load")
    if response is None or not response.ok:
        found.add("load", f"{url}: HTTP {response.status if response else 'no response'}")
    refresh = META_REFRESH.search((book_html / page_path).read_text(encoding="utf-8", errors="replace"))
    if refresh:
        target = urljoin(url, refresh.group(1).strip())
        page.wait_for_url(target, wait_until="load")
    final = urlsplit(page.url).path.lstrip("/")
    kind = page_kind(book_html, final)

    mathjax = page.evaluate(WAIT_FOR_MATHJAX, TIMEOUT_MS)
    images = page.evaluate(WAIT_FOR_IMAGES, TIMEOUT_MS)
    screenshot = screenshot_dir / (re.sub(r"\.html$", "", page_path) + ".png")
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot), full_page=True, animations="disabled")
    dom = page.evaluate(INSPECT, [ERROR_OUTPUTS])
    prose = page.evaluate(PROSE_TEXT)

    # -- images
    for img in images:
        if not img["complete"] or img["width"] <= 0:
            found.add("images", f"not loaded (naturalWidth {img['width']}): {img['src']}")

    # -- math
    if dom["math"] or any(t in prose for t in RAW_TEX):
        if mathjax is None:
            found.add("math", f"{dom['math']} formula(s) but MathJax did not start (window.MathJax.startup missing)")
        elif mathjax["state"] != "done":
            found.add("math", f"MathJax startup.promise: {mathjax['state']}")
        if dom["math"] and not dom["mjx"]:
            found.add("math", f"{dom['math']} formula(s) (class 'math') and no MathJax output (mjx-container)")
        for snippet in dom["untypeset"][:5]:
            found.add("math", f"not typeset: {snippet}")
        if len(dom["untypeset"]) > 5:
            found.add("math", f"... {len(dom['untypeset'])} formulas not typeset in all")
    for error in dom["mathErrors"]:
        found.add("math", f"MathJax error: {error}")
    for token in RAW_TEX:
        for hit in occurrences(prose, token):
            found.add("math", f"raw TeX {hit}")

    # -- references
    for token in UNRESOLVED_TEXT:
        for hit in occurrences(prose, token):
            found.add("references", f"unresolved {hit}")
    for xref in dom["unlinkedXrefs"]:
        if XREF_EXPECTED_UNLINKED.search(xref["cls"]) and not XREF_MUST_LINK.search(xref["text"]):
            continue
        found.add("references", f"unresolved reference (class {xref['cls']!r}): {xref['text']}")

    # -- tracebacks
    for hit in occurrences(dom["text"], TRACEBACK_TEXT):
        found.add("tracebacks", hit)
    for output in dom["errorOutputs"]:
        if "traceback" in output["cls"].split() or "Error" in output["text"]:
            found.add("tracebacks", f"output ({output['cls']}): {output['text'].strip()[:200]!r}")

    # -- header buttons
    for name in REQUIRED_BUTTONS[kind]:
        hrefs = page.eval_on_selector_all(BUTTONS[name], "els => els.map(e => e.href || '')")
        if not hrefs:
            found.add("buttons", f"no {name!r} button (selector {BUTTONS[name]!r})")
        elif name in DOWNLOADS:
            for href in hrefs:
                if urlsplit(href).hostname in LOCAL_HOSTS and (status := http_status(href)) != 200:
                    found.add("buttons", f"{name!r} links to {href}: HTTP {status}")

    # -- width: nothing makes the page scroll sideways
    if dom["scrollWidth"] > dom["innerWidth"]:
        found.add("width", f"the page is {dom['scrollWidth']} px wide in a {dom['innerWidth']} px window")

    # -- the stamp of the code (book/_ext/stamp.py), with the digest of rbdyn's sources as they are
    if kind != "generated":
        digest = rbdyn_digest()
        if len(dom["stamp"]) != 1:
            found.add("stamp", f"{len(dom['stamp'])} stamps ({STAMP}) on the page, not one")
        elif f"sources {digest}" not in dom["stamp"][0]:
            found.add("stamp", f"the stamp does not name the sources {digest}: {dom['stamp'][0]!r}")

    # -- console errors and failed requests (last: collected while all of the above ran)
    for msg in console:
        where = msg.location.get("url", "")
        if where in blocked:  # the console's "Failed to load resource" for a blocked request
            continue
        line = msg.location.get("lineNumber")
        found.add("console", f"{msg.text}" + (f" ({where}:{line})" if where else ""))
    for failed_url, failure in failed:
        if failed_url not in blocked:
            found.add("requests", f"failed ({failure}): {failed_url}")

    if found.by_check:
        pytest.fail(found.report(page_path, kind, screenshot), pytrace=False)
