"""Headless Chromium renders the `castline logs timeline --html` page as a person would see it.

`render_and_check(html_path, png_path)` screenshots the page to a PNG of the window's size and
dumps the DOM Chromium built (after its own HTML parsing, so broken markup or escaping shows up),
then asserts the hooks the page promises: #timeline, #summary, .lane[data-device],
.session[data-state] with .segment.state-<name>, .end-reason, .request (.failed), .failure.
It is meant for a test that produces the HTML with the real `castline logs timeline`; the
self-tests below prove the helper itself on small hand-made pages.

Chromium: Debian's `chromium` package (scripts/install-deps.sh). Each run gets its own throwaway
--user-data-dir and runs in its own process group, killed by that id if it outlives the timeout.
The launcher's stderr noise is ignored: "/usr/bin/chromium: 9: [: …: unexpected operator"
(/etc/chromium.d/dev-shm) and "ERROR:dbus/…" lines (no system bus here).
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from html.parser import HTMLParser

CHROMIUM = os.environ.get("CASTLINE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
WINDOW = (1400, 900)
TIMEOUT = 60
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_chromium(*args, timeout=TIMEOUT):
    """Runs headless Chromium with a throwaway profile; returns (stdout, stderr, seconds).
    The whole process group (browser, zygote, renderers) is killed if it outlives `timeout`."""
    assert CHROMIUM, "chromium not found: apt-get install chromium (scripts/install-deps.sh)"
    profile = tempfile.mkdtemp(prefix="castline-chromium-")
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--metrics-recording-only", "--mute-audio", f"--user-data-dir={profile}", *args]
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ, "HOME": profile})
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        raise AssertionError(f"chromium did not finish within {timeout} s: {' '.join(argv)}\n"
                             f"{meaningful_stderr(err.decode(errors='replace'))}")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    seconds = time.monotonic() - started
    err_text = err.decode(errors="replace")
    assert process.returncode == 0, f"chromium exited {process.returncode}: {' '.join(argv)}\n{meaningful_stderr(err_text)}"
    return out.decode(errors="replace"), err_text, seconds


def meaningful_stderr(text):
    """Chromium's stderr without the noise every run prints here."""
    noise = ("ERROR:dbus/", "unexpected operator", "bytes written to file")
    return "\n".join(line for line in text.splitlines() if not any(n in line for n in noise))


def png_size(path):
    """(width, height) from the IHDR chunk; asserts the file is a PNG."""
    with open(path, "rb") as f:
        head = f.read(33)
    assert head[:8] == PNG_SIGNATURE, f"{path} is not a PNG (starts {head[:8]!r})"
    assert head[12:16] == b"IHDR", f"{path}: no IHDR chunk first"
    return struct.unpack(">II", head[16:24])


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = {name: (value if value is not None else "") for name, value in attrs}
        self.classes = set(self.attrs.get("class", "").split())
        self.parent = parent
        self.children = []
        self.text = ""

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def all_text(self):
        return self.text + "".join(child.all_text() for child in self.children)

    def __repr__(self):
        return f"<{self.tag} {self.attrs}>"


class Page(HTMLParser):
    """The DOM Chromium dumped, as a light tree: find elements by id or class."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", [], None)
        self.elements = []
        self._stack = [self.root]
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs, self._stack[-1])
        self._stack[-1].children.append(element)
        self.elements.append(element)
        if tag not in self.VOID:
            self._stack.append(element)

    def handle_startendtag(self, tag, attrs):
        element = Element(tag, attrs, self._stack[-1])
        self._stack[-1].children.append(element)
        self.elements.append(element)

    def handle_endtag(self, tag):
        for i in range(len(self._stack) - 1, 0, -1):
            if self._stack[i].tag == tag:
                del self._stack[i:]
                return

    def handle_data(self, data):
        self._stack[-1].text += data

    def by_id(self, ident):
        found = [e for e in self.elements if e.attrs.get("id") == ident]
        return found[0] if found else None

    def by_class(self, *names, within=None):
        """Elements carrying every class in `names` (optionally inside `within`)."""
        wanted = set(names)
        return [e for e in self.elements if wanted <= e.classes and (within is None or within in e.ancestors())]

    def title_of(self, element):
        """The SVG tooltip text of an element (its <title> child)."""
        for child in element.children:
            if child.tag == "title":
                return child.all_text()
        return None


EXTERNAL = re.compile(r"""(?:\bsrc|\bhref)\s*=\s*["']?\s*(?:https?:|//)|@import|url\(\s*["']?\s*(?:https?:|//)|<link\b""",
                      re.IGNORECASE)


def render_and_check(html_path, png_path, *, window=WINDOW, devices=None, expect_empty=False,
                     expect_requests=None, expect_failed_requests=None, expect_failures=None,
                     expect_open_sessions=None, min_png_bytes=8_000, timeout=TIMEOUT):
    """Screenshots `html_path` to `png_path` (`window` = (width, height)) and checks the DOM.

    devices: device ids that must each have a `.lane[data-device]` and a `.device-detail`.
    expect_empty: the page must say there are no sessions (and draw no lane).
    expect_requests / expect_failed_requests / expect_failures / expect_open_sessions: True means
    at least one such mark, False none, None don't care.
    Returns the parsed `Page` (with `.seconds` = screenshot + dump time) for further asserts."""
    html_path = os.path.abspath(html_path)
    png_path = os.path.abspath(png_path)
    with open(html_path, encoding="utf-8") as f:
        source = f.read()
    assert source.lstrip().lower().startswith("<!doctype html>"), "not an HTML page"
    external = EXTERNAL.search(source)
    assert not external, f"the page loads something from outside: {source[max(0, external.start() - 60):external.end() + 60]!r}"
    assert "<script src" not in source.lower(), "the page loads a script"

    url = "file://" + html_path
    if os.path.exists(png_path):
        os.remove(png_path)
    _, _, shot_seconds = run_chromium(f"--screenshot={png_path}", f"--window-size={window[0]},{window[1]}",
                                      "--hide-scrollbars", url, timeout=timeout)
    assert os.path.exists(png_path), f"chromium wrote no screenshot at {png_path}"
    assert png_size(png_path) == tuple(window), f"screenshot is {png_size(png_path)}, window was {window}"
    assert os.path.getsize(png_path) >= min_png_bytes, \
        f"screenshot is only {os.path.getsize(png_path)} bytes: a blank page?"

    dom, _, dump_seconds = run_chromium("--dump-dom", f"--window-size={window[0]},{window[1]}", url, timeout=timeout)
    assert "</html>" in dom, f"no DOM dumped:\n{dom[:500]}"
    page = Page(dom)
    page.dom = dom
    page.seconds = shot_seconds + dump_seconds

    timeline = page.by_id("timeline")
    summary = page.by_id("summary")
    assert timeline is not None, "no #timeline"
    assert summary is not None, "no #summary"

    lanes = page.by_class("lane")
    if expect_empty:
        message = " ".join(e.all_text() for e in page.by_class("empty-message"))
        assert "no sessions in these logs" in message.lower(), f"empty page does not say so: {message!r}"
        assert not page.by_class("session"), "an empty page draws sessions"
        return page

    assert lanes, "no .lane drawn"
    for lane in lanes:
        assert lane.attrs.get("data-device"), f"lane without data-device: {lane}"
    lane_ids = {lane.attrs["data-device"] for lane in lanes}
    for device in devices or ():
        assert device in lane_ids, f"no lane for device {device!r} (lanes: {sorted(lane_ids)})"
        assert any(e.attrs.get("data-device") == device for e in page.by_class("device-detail")), \
            f"no table section for device {device!r}"

    sessions = page.by_class("session")
    assert sessions, "no .session drawn"
    for session in sessions:
        assert "data-state" in session.attrs, f"session without data-state: {session}"
        assert session.attrs.get("data-session") is not None, f"session without data-session: {session}"
        assert any(lane in session.ancestors() for lane in lanes), f"session outside any lane: {session}"
        segments = page.by_class("segment", within=session)
        assert segments, f"session {session.attrs.get('data-session')!r} has no .segment"
        for segment in segments:
            assert any(c.startswith("state-") for c in segment.classes), f"segment without state-<name>: {segment}"
        reasons = page.by_class("end-reason", within=session)
        assert len(reasons) == 1 and reasons[0].all_text().strip(), \
            f"session {session.attrs.get('data-session')!r} has no end reason written"
        if "open" in session.classes:
            assert reasons[0].text.strip() == "open", f"open session labelled {reasons[0].text!r}"

    requests = page.by_class("request", within=timeline)
    failed_requests = page.by_class("request", "failed", within=timeline)
    failures = page.by_class("failure", within=timeline)
    open_sessions = [s for s in sessions if "open" in s.classes]
    for what, marks, expected in (("request", requests, expect_requests),
                                  ("failed request", failed_requests, expect_failed_requests),
                                  ("failure", failures, expect_failures),
                                  ("open session", open_sessions, expect_open_sessions)):
        if expected is True:
            assert marks, f"no {what} drawn"
        elif expected is False:
            assert not marks, f"{len(marks)} {what} marks drawn, expected none"
    for mark in requests + failures:
        assert page.title_of(mark), f"mark without a <title> tooltip: {mark}"
    return page


# --- self-tests of the helper --------------------------------------------------------------------

TINY_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tiny timeline</title>
<style>body{font:14px sans-serif;margin:20px} .segment.state-connected{fill:#2da44e} .segment.state-suspended{fill:#e3a008}
rect.request{fill:#57606a} rect.request.failed{fill:#d1242f} .failure{fill:#d1242f}</style></head>
<body><h1>tiny &amp; &lt;escaped&gt;</h1>
<ul id="summary" data-sessions="2"><li>1 device</li><li>2 sessions</li></ul>
<div id="timeline"><svg width="600" height="120" xmlns="http://www.w3.org/2000/svg">
<g class="lane" data-device="dev&quot;1">
 <text x="10" y="30">Living Room TV</text>
 <g class="session" data-session="s1" data-state="ended">
  <rect class="segment state-connected" data-state="connected" x="150" y="15" width="100" height="18"><title>connected</title></rect>
  <rect class="segment state-suspended" data-state="suspended" x="250" y="15" width="40" height="18"><title>suspended</title></rect>
  <text class="end-reason" x="296" y="29">session gone</text>
 </g>
 <g class="session open" data-session="s2" data-state="connected">
  <rect class="segment state-connected" x="350" y="15" width="200" height="18"/>
  <text class="end-reason open" x="556" y="29">open<title>still open</title></text>
 </g>
 <rect class="request" x="160" y="50" width="2" height="10"><title>LOAD · 120 ms</title></rect>
 <rect class="request failed" x="200" y="48" width="3" height="14"><title>PLAY · FAILED</title></rect>
 <path class="failure" d="M300,75 L307,82 L300,89 L293,82 Z"><title>load: media not found</title></path>
</g></svg></div>
<section class="device-detail" data-device="dev&quot;1"><table><tr><td>s1</td></tr></table></section>
</body></html>
"""


def test_render_and_check_accepts_a_tiny_hand_made_page(tmp_path):
    html = tmp_path / "tiny.html"
    html.write_text(TINY_PAGE, encoding="utf-8")
    png = tmp_path / "tiny.png"
    page = render_and_check(html, png, window=(800, 300), devices=['dev"1'], expect_requests=True,
                            expect_failed_requests=True, expect_failures=True, expect_open_sessions=True,
                            min_png_bytes=2_000)
    assert png_size(png) == (800, 300)
    assert page.by_id("summary").attrs["data-sessions"] == "2"
    assert page.title_of(page.by_class("failure")[0]) == "load: media not found"
    assert page.seconds < 2 * TIMEOUT


def test_render_and_check_accepts_an_empty_page(tmp_path):
    html = tmp_path / "empty.html"
    html.write_text('<!DOCTYPE html><html><body><h1>castline timeline</h1><ul id="summary"><li>0 sessions</li></ul>'
                    '<div id="timeline" class="empty"><p class="empty-message">There are no sessions in these logs.</p>'
                    '</div></body></html>', encoding="utf-8")
    render_and_check(html, tmp_path / "empty.png", expect_empty=True, min_png_bytes=1_000)


def test_render_and_check_rejects_a_page_without_the_hooks(tmp_path):
    html = tmp_path / "broken.html"
    # A session whose end reason is missing, and no failure although one is expected.
    html.write_text(TINY_PAGE.replace('<text class="end-reason" x="296" y="29">session gone</text>', ""),
                    encoding="utf-8")
    try:
        render_and_check(html, tmp_path / "broken.png", window=(800, 300), min_png_bytes=2_000)
    except AssertionError as error:
        assert "end reason" in str(error), error
    else:
        raise AssertionError("a session without an end reason was accepted")


def test_render_and_check_rejects_a_page_that_loads_from_outside(tmp_path):
    html = tmp_path / "external.html"
    html.write_text(TINY_PAGE.replace("<title>tiny timeline</title>",
                                      '<title>x</title><link rel="stylesheet" href="https://cdn.invalid/x.css">'),
                    encoding="utf-8")
    try:
        render_and_check(html, tmp_path / "external.png", window=(800, 300))
    except AssertionError as error:
        assert "outside" in str(error), error
    else:
        raise AssertionError("a page loading a stylesheet from outside was accepted")
