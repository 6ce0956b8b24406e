"""The proof-of-display report against the truth (issue 42). Five simulated TVs under a scripted
run: a schedule switch, a SIGHUP page change, an outage during which the TV keeps playing,
another sender's cast, an announcement, and the daemon stopped for 10 s. The truth is the
simulator's own view of each screen, sampled every 0.1 s on the test's clock, with the spells
castline cannot observe (the outage, the daemon's downtime until it sees each TV again) marked
as such. `castline logs report --json` must give every (TV, content) interval within 1 s of
the truth, both ways; the outage and the downtime are "not observed", the announcement is
labelled, the CSV sums match the JSON, and the HTML page renders in headless Chromium.
A second, shorter run covers the screen itself: a TV put in standby and on another input (HDMI-CEC
fields on the wire) and one covered by ambient mode (the model's profile, nothing on the wire)
is reported not shown, with the cause, for the span the simulator's `state.screen` says."""
import csv
import io
import json
import os
import signal
import shutil
import subprocess
import threading
import time

import pytest

import page_server
from conftest import CLIENTS, PYTHON, Simulator, castline_binary, wait_until
from hub import Hub, api

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

MEDIA = "http://media.invalid/signage-{}.mp4"
FALLBACK = "http://media.invalid/morning.mp4"
SCHED = "http://media.invalid/noon-special.mp4"
VISITOR = "http://media.invalid/visitor.mp4"
CHIME = "http://media.invalid/chime.mp3"
RULES = [{"contentId": "*chime*", "duration": 3}, {"contentId": "*", "duration": 100000}]
TOLERANCE = 1.0
#: Truth segments and report intervals shorter than this are transitions (a LOAD, a launch).
SIGNIFICANT = 2.0


def sim_view(device):
    """What a TV shows, from the simulator: (kind, content) as the report should say it."""
    state = device["state"]
    app = state.get("app")
    screen = state.get("screen")
    if screen and not screen.get("app_visible"):   # standby, another input, covered: whatever the app shows
        return ("not_shown", None)
    if not app or app.get("isIdleScreen"):
        return ("not_shown", None)
    media = state.get("media") or {}
    content = media.get("contentId")
    if content and media.get("playerState") in ("PLAYING", "BUFFERING", "PAUSED"):
        return ("not_shown", None) if content == VISITOR else ("shown", content)
    page = (app.get("page") or {}).get("url")
    if page and not content:
        return ("shown", page)
    return ("not_shown", None)


class Truth:
    """Samples the simulator's screens every 0.1 s in a thread: [(unix time, [view per TV])]."""

    def __init__(self, sim):
        self.sim = sim
        self.samples = []
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            before = time.time()
            try:
                devices = self.sim.control({"command": "list"})["devices"]
            except Exception:  # noqa: BLE001 - a busy control socket: the next sample
                continue
            after = time.time()
            self.samples.append(((before + after) / 2, [sim_view(d) for d in devices]))
            time.sleep(max(0, 0.1 - (time.time() - before)))

    def stop(self):
        self.running = False
        self.thread.join(timeout=10)


def segments(samples, tv, windows):
    """The TV's truth as [start, end, key]: equal consecutive samples merged; inside a window
    castline cannot observe, ("not_observed", None)."""
    out = []
    for t, views in samples:
        key = ("not_observed", None) if any(a <= t < b for a, b in windows) else views[tv]
        if out and out[-1][2] == key:
            out[-1][1] = t
        else:
            if out:
                out[-1][1] = t
            out.append([t, t, key])
    return out


def key(interval):
    return (interval["kind"], interval["content"] if interval["kind"] == "shown" else None)


def matches(a_start, a_end, b_start, b_end, first, last):
    return (first or abs(a_start - b_start) <= TOLERANCE) and (last or abs(a_end - b_end) <= TOLERANCE)


def compare(name, truth, report):
    """Every significant truth segment has a report interval with its key and bounds (within
    the tolerance), and every significant report interval has a truth segment. The first and
    last of each side begin and end where the run and the records do: only their inner bound counts."""
    problems = []
    merged = []   # report intervals with equal keys merged (an interval cut where only its cause changed)
    for i in report:
        if merged and key(merged[-1]) == key(i) and abs(merged[-1]["to"] - i["from"]) < 1e-6:
            merged[-1] = dict(merged[-1], to=i["to"])
        else:
            merged.append(dict(i))
    for n, (start, end, k) in enumerate(truth):
        if end - start < SIGNIFICANT:
            continue
        first, last = n == 0, n == len(truth) - 1
        if not any(key(i) == k and matches(i["from"], i["to"], start, end, first, last) for i in merged):
            problems.append(f"{name}: truth {k} {start:.2f}-{end:.2f} has no interval within {TOLERANCE} s: "
                            + str([(key(i), round(i["from"], 2), round(i["to"], 2)) for i in merged if i["to"] > start and i["from"] < end]))
    for n, i in enumerate(merged):
        if i["to"] - i["from"] < SIGNIFICANT:
            continue
        first, last = n == 0, n == len(merged) - 1
        if not any(k == key(i) and matches(i["from"], i["to"], start, end, first, last) for start, end, k in truth):
            problems.append(f"{name}: report {key(i)} {i['from']:.2f}-{i['to']:.2f} ({i['cause']}) matches no truth: "
                            + str([(k, round(s, 2), round(e, 2)) for s, e, k in truth if e > i["from"] and s < i["to"]]))
    return problems


def stop_running(truth, *hubs):
    """After a run, whatever it left running: the truth's sampler, the daemons still up."""
    if truth:
        truth.stop()
    for h in hubs:
        if h and h.process.poll() is None:
            h.stop()


def connected_times(socket_path, ids, until):
    """When the API first says each device is connected again (polled every 0.05 s), by id."""
    seen = {}
    while time.time() < until and len(seen) < len(ids):
        try:
            status, body, _ = api(socket_path, "GET", "/v1/devices")
            if status == 200:
                for d in body.get("devices", []):
                    if d.get("link") == "connected" and d["id"] not in seen:
                        seen[d["id"]] = time.time()
        except OSError:
            pass
        time.sleep(0.05)
    return seen


def test_the_report_gives_each_screens_content_within_a_second_of_the_truth(netns, workdir):
    rules = os.path.join(workdir, "sim-rules.json")
    with open(rules, "w") as f:
        json.dump({"mediaRules": RULES}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", rules, "--devices", "5"])
    pages, base_url = page_server.start(netns)
    devices = sim.ready["devices"]
    names, ids = [d["name"] for d in devices], [d["uuid"] for d in devices]
    board = [f"{base_url}/board-1.html", f"{base_url}/board-2.html"]
    log = os.path.join(workdir, "hub.jsonl")
    start = time.time()
    switch = int(start) + 30     # the schedule's entry begins here (a whole second: the config names it)
    at = lambda t: time.strftime("%H:%M:%S", time.gmtime(t))

    def jobs(page):
        return f"""jobs:
  - name: dash
    devices: [{json.dumps(names[0])}]
    site: "{page}"
  - name: sched
    devices: [{json.dumps(names[1])}]
    timezone: UTC
    schedule:
      - {{days: daily, from: "{at(switch)}", to: "{at(switch + 3600)}", media: "{SCHED}"}}
    fallback: {{media: "{FALLBACK}"}}
""" + "".join(f"""  - name: tv{i}
    devices: [{json.dumps(names[i])}]
    media: {{url: "{MEDIA.format(i)}"}}
    takeover: yield
""" for i in (2, 3, 4)) + f"""  - name: chime
    devices: [{json.dumps(names[4])}]
    announce: {{media: "{CHIME}", volume: 40, timeout: 20}}
"""
    session = "session: {heartbeat_interval: 0.3, heartbeat_timeout: 1.2, reconnect: {initial_delay: 0.1, max_delay: 0.3}}"
    truth, hub, second, visitor = None, None, None, None
    windows = {i: [] for i in range(5)}
    try:
        hub = Hub(netns, sim, workdir, jobs=jobs(board[0]), api_extra=session, json_log=log, log_rules="info,CastChannel.*:warning")
        truth = Truth(sim)
        wanted = [("shown", board[0]), ("shown", FALLBACK)] + [("shown", MEDIA.format(i)) for i in (2, 3, 4)]
        wait_until(lambda: truth.samples and truth.samples[-1][1] == wanted, 25, "every TV showing its job's content")
        assert time.time() < switch - 12, "the start-up took too long for the script"

        def until(t):
            time.sleep(max(0, t - time.time()))

        # An outage of TV 2 for 8 s: it keeps playing, castline cannot see it.
        until(switch - 10)
        outage = time.time()
        assert sim.control({"command": "outage", "device": 2, "downFor": 8})["ok"]
        windows[2].append((outage, outage + 8))
        # Another sender on TV 3 (the job yields), until its app is stopped.
        until(switch - 8)
        device = devices[3]
        visitor = subprocess.Popen(netns.command(PYTHON, os.path.join(CLIENTS, "pychromecast_visitor.py"), device["address"],
                                                 str(device["castPort"]), device["uuid"], VISITOR, "6"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The schedule switches TV 1 at `switch`; then a SIGHUP changes TV 0's page.
        until(switch + 4)
        with open(hub.config) as f:
            text = f.read()
        with open(hub.config, "w") as f:
            f.write(text.replace(board[0], board[1]))
        hub.process.send_signal(signal.SIGHUP)
        until(switch + 5)
        assert sim.control({"command": "stop-app", "device": 3})["ok"]   # the visitor's app ends: the job takes TV 3 back
        # The announcement on TV 4 (a 3 s chime), then what played comes back.
        until(switch + 10)
        status, body, _ = api(hub.socket, "POST", "/v1/jobs/chime/run", {"wait": True})
        assert status == 200, body
        # The daemon stopped for 10 s (the TVs go on playing), then started again.
        until(switch + 20)
        stopped = time.time()
        assert hub.stop() == 0
        until(stopped + 10)
        poll = {}
        poller = threading.Thread(target=lambda: poll.update(connected_times(hub.socket, ids, time.time() + 30)), daemon=True)
        poller.start()
        second = Hub(netns, sim, workdir, jobs=jobs(board[1]), api_extra=session, json_log=log, log_rules="info,CastChannel.*:warning")
        poller.join(timeout=35)
        for i in range(5):
            windows[i].append((stopped, poll[ids[i]]))
        time.sleep(6)
        truth.stop()
        assert second.stop() == 0
    finally:
        stop_running(truth, second, hub)
        if visitor and visitor.poll() is None:
            visitor.kill()
            visitor.wait(timeout=5)
        page_server.stop(pages)
        assert sim.stop() == 0

    artefacts = os.environ.get("CASTLINE_TEST_ARTEFACTS")   # the log and the page, kept for a reader
    if artefacts:
        os.makedirs(artefacts, exist_ok=True)
        shutil.copy(log, artefacts)
        with open(os.path.join(artefacts, "truth.json"), "w") as f:
            json.dump({"samples": truth.samples, "windows": windows, "names": names, "ids": ids}, f)
    result = netns.run(castline_binary(), "logs", "report", "--json", "--timezone", "UTC", log)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    by_id = {d["device"]: d for d in report["devices"]}
    assert sorted(by_id) == sorted(ids), by_id.keys()
    assert [d["deviceName"] for d in report["devices"]] == sorted(names, key=str.lower), "TVs in name order"
    problems = []
    for i in range(5):
        problems += compare(names[i], segments(truth.samples, i, windows[i]), by_id[ids[i]]["intervals"])
    assert not problems, "\n".join(problems)

    def spans(tv, kind, cause_start=None, content=None):
        return [x for x in by_id[ids[tv]]["intervals"] if x["kind"] == kind and (cause_start is None or (x["cause"] or "").startswith(cause_start))
                and (content is None or x["content"] == content)]
    # The outage: not observed from when it began to when it ended (the TV played on).
    [blind] = [x for x in spans(2, "not_observed") if x["from"] < outage + 4 < x["to"]]
    assert abs(blind["from"] - outage) <= TOLERANCE and abs(blind["to"] - (outage + 8)) <= TOLERANCE, blind
    assert blind["cause"].startswith("the link was down"), blind
    # The daemon's downtime: not observed on every TV, never shown.
    for i in range(5):
        [down] = [x for x in spans(i, "not_observed") if x["from"] < stopped + 5 < x["to"]]
        assert abs(down["from"] - stopped) <= TOLERANCE and abs(down["to"] - poll[ids[i]]) <= TOLERANCE, down
        assert down["cause"] == "castline was not running", down
    # The announcement, labelled as one; another sender's cast, not shown with its cause.
    [chime] = spans(4, "shown", content=CHIME)
    assert chime["cause"] == "announcement" and 2 <= chime["to"] - chime["from"] <= 5, chime
    other = spans(3, "not_shown", "another sender")
    assert other and max(x["to"] - x["from"] for x in other) >= 3, by_id[ids[3]]["intervals"]
    # The schedule's switch and the SIGHUP's page, each where the truth has them.
    assert [x["content"] for x in spans(1, "shown")][:1] == [FALLBACK] and spans(1, "shown", content=SCHED)
    assert abs(spans(1, "shown", content=SCHED)[0]["from"] - switch) <= TOLERANCE
    assert spans(0, "shown", content=board[0]) and spans(0, "shown", content=board[1])

    # CSV: one row per interval; its sums per TV match the JSON's.
    table = netns.run(castline_binary(), "logs", "report", "--csv", "--timezone", "UTC", log)
    assert table.returncode == 0, table.stderr
    rows = list(csv.DictReader(io.StringIO(table.stdout)))
    assert len(rows) == sum(len(d["intervals"]) for d in report["devices"])
    for d in report["devices"]:
        summed = sum(float(r["seconds"]) for r in rows if r["device"] == d["device"] and r["kind"] == "shown")
        assert abs(summed - d["shown_seconds"]) < 0.005, (d["device"], summed, d["shown_seconds"])
    contents = {c["content"]: c for c in report["contents"]}
    assert contents[CHIME]["announcement"] and contents[CHIME]["plays"] == 1
    assert contents[MEDIA.format(2)]["plays"] == 1, "back after an outage is the same play"

    # The page a client gets: rendered by headless Chromium, kept as the test's artefact.
    from test_timeline_render import run_chromium
    page = os.path.join(workdir, "report.html")
    written = netns.run(castline_binary(), "logs", "report", "--html", page, "--timezone", "UTC", log)
    assert written.returncode == 0, written.stderr
    png = os.path.join(workdir, "report.png")
    run_chromium(f"--screenshot={png}", "--window-size=1200,2400", "file://" + page)
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    dom, _, _ = run_chromium("--dump-dom", "--window-size=1200,2400", "file://" + page)
    assert dom.count('class="screen"') == 5 and 'class="announcement"' in dom and dom.count('class="axis"') == 5, dom[:2000]
    if artefacts:
        for name in (page, png):
            shutil.copy(name, artefacts)


def first_change(samples, tv, after, predicate):
    """The first sample's time, after `after`, whose view of the TV satisfies the predicate."""
    return next(t for t, views in samples if t > after and predicate(views[tv]))


def test_a_screen_in_standby_on_another_input_or_covered_is_reported_not_shown(netns, workdir):
    from test_field_castline import GOOGLE_TV, bar_and_lobby, listing, site_jobs
    # Bar: ambient mode covers its page, in the simulator and by castline's profile (no CEC
    # fields). Lobby: reports standby and the active input; no ambient mode covers its page.
    sim = bar_and_lobby(netns, workdir)
    pages, base_url = page_server.start(netns)
    page = f"{base_url}/board-1.html"
    log = os.path.join(workdir, "hub.jsonl")
    hub, truth = None, None
    try:
        hub = Hub(netns, sim, workdir, jobs=site_jobs(("bar", "Bar", f'"{page}"'), ("lobby", "Lobby", f'"{page}"')), json_log=log,
                  daemon_extra=f'field_time_scale: 200, field_profiles: {{"{GOOGLE_TV}": {{idle_timeout: never}}}}')
        truth = Truth(sim)
        wait_until(lambda: truth.samples and truth.samples[-1][1][1] == ("shown", page), 20, "Lobby's page up")
        wait_until(lambda: listing(sim)["Bar"]["screen"]["covered_by"] == "ambient", 15, "the simulator's ambient cover of Bar")
        # Lobby: 4 s in standby, on for 3 s, 4 s on another input, then this input again.
        for command, back in (({"command": "standby", "device": 1}, {"command": "standby", "device": 1, "enabled": False}),
                              ({"command": "input", "device": 1}, {"command": "input", "device": 1, "active": True})):
            assert sim.control(command)["ok"]
            time.sleep(4)   # the span under test: the screen stays dark this long
            assert sim.control(back)["ok"]
            wait_until(lambda: listing(sim)["Lobby"]["screen"]["app_visible"], 5, "Lobby shows the app again")
            time.sleep(3)   # the span under test: the screen shows the app again this long before the next change
        truth.stop()
        assert hub.stop() == 0
    finally:
        stop_running(truth, hub)
        page_server.stop(pages)
        sim.stop()

    result = netns.run(castline_binary(), "logs", "report", "--json", "--timezone", "UTC", log)
    assert result.returncode == 0, result.stderr
    by_name = {d["deviceName"]: d["intervals"] for d in json.loads(result.stdout)["devices"]}
    problems = []
    for tv, name in enumerate(["Bar", "Lobby"]):
        problems += compare(name, segments(truth.samples, tv, []), by_name[name])
    assert not problems, "\n".join(problems)
    # Each dark span, with its cause, within the tolerance of the simulator's own transitions.
    samples = truth.samples
    begun = samples[0][0]
    dark = lambda view: view[0] == "not_shown"
    covered = first_change(samples, 0, first_change(samples, 0, begun, lambda v: v[0] == "shown"), dark)
    [cover] = [i for i in by_name["Bar"] if i["cause"] == "covered"]
    assert cover["kind"] == "not_shown" and cover["content"] == page and abs(cover["from"] - covered) <= TOLERANCE, cover
    shown = lambda view: view == ("shown", page)
    off_from = first_change(samples, 1, first_change(samples, 1, begun, shown), dark)
    off_to = first_change(samples, 1, off_from, shown)
    input_from = first_change(samples, 1, off_to, dark)
    input_to = first_change(samples, 1, input_from, shown)
    for cause, start, end in (("off", off_from, off_to), ("other input", input_from, input_to)):
        [span] = [i for i in by_name["Lobby"] if i["cause"] == cause]
        assert span["kind"] == "not_shown" and span["content"] == page, span
        assert abs(span["from"] - start) <= TOLERANCE and abs(span["to"] - end) <= TOLERANCE, (span, start, end)
