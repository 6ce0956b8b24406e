"""`castline logs` over logs written by a real `castline run` against `castline sim` with injected
faults: a dropped connection, a stalled heartbeat (the device ignores PINGs) and a LOAD failure.
stats must report the right counts, latencies and end reasons; query must find the records;
explain must name the deciding rule; the timeline page is rendered by headless Chromium."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import castline_binary, wait_until
from test_timeline_render import render_and_check

CONFIG = """
devices:
  - name: Lobby TV
    host: 127.0.0.1
discovery:
  providers: [static]
logging:
  rules: "debug,CastChannel.*heartbeat:info"
  console: false
  sinks:
    - type: json
      options: {{path: {log}}}
session:
  heartbeat_interval: 0.3
  heartbeat_timeout: 1.2
  reconnect: {{initial_delay: 0.1, max_delay: 0.3}}
jobs:
  - name: lobby
    devices: ["Lobby*"]
    media: {{url: "http://media.invalid/lobby.mp4", title: Lobby}}
    retry_delay: 0.3
"""


def sim_state(sim):
    return sim.control({"command": "list"})["devices"][0]["state"]


def playing(sim):
    media = sim_state(sim).get("media") or {}
    return media.get("playerState") == "PLAYING" and media.get("contentId") == "http://media.invalid/lobby.mp4"


def session_events(log):
    """The CastSession event names (didSuspend, didResume, …) in the JSON log so far."""
    events = []
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue   # the line the sink is writing right now
                if record.get("class") == "CastSession" and record.get("attributes", {}).get("event"):
                    events.append(record["attributes"]["event"])
    return events


def all_resumed(log, suspended):
    """At least `suspended` suspensions logged, and as many resumptions."""
    events = session_events(log)
    return events.count("didSuspend") >= suspended and events.count("didResume") == events.count("didSuspend")


def answered_on_open_connection(entries):
    """A PONG the device sent on a connection still open (per these frame-log entries): the
    sender's heartbeat is answered again, so no heartbeat timeout is left under way."""
    closed = {e["connection"] for e in entries if e["event"] == "closed"}
    return any(e["event"] == "frame" and e.get("direction") == "out" and e.get("type") == "PONG"
               and e["connection"] not in closed for e in entries)


def castline(netns, *args, timeout=60):
    return netns.run(castline_binary(), *args, timeout=timeout)


@pytest.mark.needs_root("a network namespace (ip netns)")
def test_logs_of_a_faulty_run_give_the_right_statistics_query_explain_and_timeline(netns, sim, workdir):
    log = os.path.join(workdir, "logs", "castline.jsonl")
    os.makedirs(os.path.dirname(log))
    config = os.path.join(workdir, "castline.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(log=log))
    daemon = subprocess.Popen(netns.command(castline_binary(), "run", "--config", config), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: playing(sim), 15, "the first cast")
        # Fault 1: the device drops the connection; the session suspends and resumes.
        assert sim.control({"command": "drop"})["ok"]
        wait_until(lambda: all_resumed(log, suspended=1), 15, "the session resumed after the drop")
        wait_until(lambda: playing(sim), 10, "playing after the drop")
        # Fault 2: the device stops answering PINGs: a heartbeat timeout (1.2 s), then it answers again.
        assert sim.control({"command": "ignore-pings", "enabled": True})["ok"]
        # Behaviour, not a wait: the device stays deaf to PINGs for 2.5 s (the heartbeat-timeout
        # count asserted below is what a 2.5 s stall at a 1.2 s timeout gives).
        time.sleep(2.5)
        assert sim.control({"command": "ignore-pings", "enabled": False})["ok"]
        mark = len(sim.frames())
        wait_until(lambda: answered_on_open_connection(sim.frames()[mark:]) and all_resumed(log, suspended=2), 15,
                   "a PONG on a live connection and every suspension resumed after the stalled heartbeat")
        wait_until(lambda: playing(sim), 10, "playing after the stalled heartbeat")
        # Fault 3: the next LOAD fails; stopping the app makes the job cast again: LOAD_FAILED, retry, PLAYING.
        assert sim.control({"command": "fail-next-load", "code": 104})["ok"]
        mark = len(sim.frames())
        assert sim.control({"command": "stop-app"})["ok"]
        wait_until(lambda: any(e.get("type") == "LOAD_FAILED" for e in sim.frames()[mark:]), 15, "the failed LOAD")
        wait_until(lambda: playing(sim), 15, "playing after the failed LOAD and the retry")
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
        assert daemon.returncode == 0, err[-3000:]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=5)

    stats_run = castline(netns, "logs", "stats", "--json", log)
    assert stats_run.returncode == 0, stats_run.stderr
    stats = json.loads(stats_run.stdout)
    # Counts: three LOADs went out (first cast, the failed one, the retry); each one answered.
    loads_out = sum(m["count"] for m in stats["messages"] if m["type"] == "LOAD" and m["direction"] == "out")
    assert loads_out == 3, stats["messages"]
    assert stats["latency"]["LOAD"]["count"] == 3 and stats["latency"]["LOAD"]["max_ms"] > 0
    assert 0 < stats["latency"]["LOAD"]["p50_ms"] <= stats["latency"]["LOAD"]["p95_ms"] <= stats["latency"]["LOAD"]["max_ms"]
    assert stats["latency"]["GET_STATUS"]["count"] >= 3
    assert stats["errors"].get("LOAD → LOAD_FAILED") == 1, stats["errors"]
    # Suspends: the drop once; the stalled heartbeat once per timeout while the PINGs were ignored
    # (2.5 s at a 1.2 s timeout: a reconnect succeeds, then times out again); every one resumed.
    reasons = [s["reason"] for s in stats["suspends"]["list"]]
    assert sum("closed by the device" in r for r in reasons) == 1, reasons
    heartbeat = sum("heartbeat timeout" in r for r in reasons)
    assert 1 <= heartbeat <= 3 and len(reasons) == 1 + heartbeat, reasons
    assert stats["suspends"]["count"] == len(reasons) and stats["suspends"]["resumed"] == len(reasons)
    assert stats["suspends"]["reconnectAttempts"] >= len(reasons)
    assert all(s["duration_ms"] > 0 for s in stats["suspends"]["list"])
    # Sessions: the hub's one link to the device (a following session) survives the stopped app and
    # ends at SIGTERM; the app it let go of is listed on it, and counted as an error.
    ends = [s["endReason"] for s in stats["sessions"]]
    assert ends == ["requested"], ends
    assert stats["sessions"][0]["suspends"] == len(reasons)
    changes = stats["sessions"][0]["appChanges"]
    assert [(c["appId"], c["change"]) for c in changes] == [("CC1AD845", "stopped")], changes
    # The simulator's stop-app stops the playing media as another sender would: kept apart from
    # castline's own stops and the device's idle closes.
    assert stats["appStops"] == {"stopped on the device while showing media (another sender, or the app ended)": 1}, stats["appStops"]
    assert stats["read"]["notJSON"] == 0 and stats["read"]["records"] > 100

    text = castline(netns, "logs", "stats", log)
    assert "LOAD: 3" in text.stdout and "app CC1AD845 stopped" in text.stdout and f"suspends: {len(reasons)}, resumed {len(reasons)}" in text.stdout, text.stdout

    # query: the failed reply, by type and by class glob, as JSON Lines.
    failed = castline(netns, "logs", "query", log, "--type", "LOAD_FAILED", "--json")
    assert failed.returncode == 0, failed.stderr
    records = [json.loads(line) for line in failed.stdout.splitlines()]
    assert len(records) == 1 and records[0]["class"] == "CastChannel.com.google.cast.media"
    assert records[0]["attributes"]["direction"] == "in"
    warnings = castline(netns, "logs", "query", log, "--class", "CastSession", "--level", "warning", "--count")
    assert int(warnings.stdout.strip()) >= len(reasons), warnings.stdout  # the didSuspends
    none = castline(netns, "logs", "query", log, "--type", "NO_SUCH_TYPE")
    assert none.returncode == 1 and none.stdout == ""

    # explain: the config's rule decides the heartbeat channel's level; --log replaces it.
    explained = castline(netns, "logs", "explain", "CastChannel.com.google.cast.tp.heartbeat", "--config", config, "--json")
    decision = json.loads(explained.stdout)
    assert decision["level"] == "info" and decision["rule"]["text"] == "CastChannel.*heartbeat:info"
    assert decision["rule"]["source"] == f"{config} (logging.rules)"
    overridden = castline(netns, "logs", "explain", "CastSession", "--config", config, "--log", "warning,*Session:verbose")
    assert "decided by rule #1 '*Session:verbose' from --log" in overridden.stdout, overridden.stdout

    # Robust to what real logs contain: garbage, a padding line, a cut last line.
    damaged = os.path.join(workdir, "damaged.jsonl")
    with open(log) as src, open(damaged, "w") as out:
        content = src.read()
        out.write("a stray text line\n" + content + "          \n" + content.splitlines()[-1][:40])
    robust = castline(netns, "logs", "stats", "--json", "--no-rotated", damaged)
    assert robust.returncode == 0, robust.stderr
    read = json.loads(robust.stdout)["read"]
    assert read["notJSON"] == 2 and read["blank"] >= 1 and read["unterminatedLastLines"] == 1, read

    # timeline: one page, rendered by headless Chromium.
    page = os.path.join(workdir, "timeline.html")
    drawn = castline(netns, "logs", "timeline", log, "--html", page)
    assert drawn.returncode == 0, drawn.stderr
    with open(page) as f:
        html = f.read()
    # (The job's URL, and its server where the LOAD failure's probe names it down, are text.)
    assert "http://" not in html.replace("http://media.invalid/lobby.mp4", "").replace("http://media.invalid:80", "")\
        .replace("http://www.w3.org/2000/svg", ""), \
        "self-contained: nothing loaded from elsewhere"
    dom = render_and_check(page, os.path.join(workdir, "timeline.png"), expect_requests=True,
                           expect_failed_requests=True, expect_failures=True)
    assert dom is not None


def record(t, body, cls="CastSession", level="info", severity=9):
    return json.dumps({"time": "2026-11-22T10:00:00Z", "time_unix_nano": t, "severity_number": severity,
                       "severity_text": "INFO", "level": level, "class": cls, "body": body}, separators=(",", ":"))


def readline_within(process, seconds):
    """The next stdout line, or an assertion after `seconds` (never a hang)."""
    import selectors
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    assert selector.select(timeout=seconds), f"no output within {seconds} s"
    return process.stdout.readline()


def test_query_follow_prints_new_records_across_rotation(workdir):
    log = os.path.join(workdir, "follow.jsonl")
    with open(log, "w") as f:
        f.write(record(1, "before") + "\n")
    process = subprocess.Popen([castline_binary(), "logs", "query", "--follow", "--class", "CastSession", log],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "before" in readline_within(process, 10)
        with open(log, "a") as f:
            f.write(record(2, "appended") + "\n" + record(3, "other class", cls="JobDriver") + "\n")
        assert "appended" in readline_within(process, 10)
        # Rotation as the JSON sink does it: rename to .1, then a new file.
        os.rename(log, log + ".1")
        with open(log, "w") as f:
            f.write(record(4, "after rotation") + "\n")
        assert "after rotation" in readline_within(process, 10)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
        assert process.returncode == 0, err
        assert "other class" not in out
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)


def test_standard_input_takes_json_lines_and_journal_export(workdir):
    lines = [record(1_000_000_000 + i, f"r{i}") for i in range(5)]
    journal = json.dumps({"__REALTIME_TIMESTAMP": "1795342530123456", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "castline",
                          "MESSAGE": "from the journal", "CASTLINE_CLASS": "CastSession", "CASTLINE_LEVEL": "warning",
                          "CASTLINE_TIME_NS": "1795342530123456789", "DEVICE": "d1"})
    text = "\n".join(lines + [journal, "garbage"]) + "\n"
    result = subprocess.run([castline_binary(), "logs", "query", "-", "--json"], input=text, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["body"] for o in out] == [f"r{i}" for i in range(5)] + ["from the journal"]
    assert out[-1]["level"] == "warning" and out[-1]["attributes"] == {"device": "d1"}
    assert "1 non-JSON line(s)" in result.stderr
    warnings = subprocess.run([castline_binary(), "logs", "query", "-", "--level", "warning", "--count"], input=text,
                              capture_output=True, text=True, timeout=30)
    assert warnings.stdout.strip() == "1"


@pytest.mark.needs_root("a network namespace (ip netns)")
def test_logs_report_proves_display_and_names_each_gap_with_its_cause(netns, workdir):
    """A job on the simulator through a drop, a stop-app and a reboot: `castline logs report`
    over the daemon's JSON log names all three, with their causes and lengths, and its HTML page
    renders in headless Chromium."""
    from conftest import Simulator
    from hub import Hub
    from test_timeline_render import run_chromium
    sim = Simulator(netns, workdir, extra=["--no-mdns"])
    log = os.path.join(workdir, "hub.jsonl")
    hub = Hub(netns, sim, workdir, json_log=log, log_rules="info,CastChannel.*:warning", jobs="""jobs:
  - name: lobby
    devices: ["*"]
    media: {url: "http://media.invalid/loop.mp4", content_type: video/mp4}
    retry_delay: 0.5
""")
    try:
        def playing():
            media = sim.control({"command": "list"})["devices"][0]["state"].get("media") or {}
            return media.get("playerState") == "PLAYING" and "on screen" in hub.log()
        wait_until(playing, 20, "the job's media playing")
        sim.control({"command": "drop"})
        def resumed():
            with open(log) as f:
                return '"didResume"' in f.read()
        wait_until(resumed, 20, "the link back after the drop")
        wait_until(playing, 20, "playing after the drop")
        sim.control({"command": "stop-app"})
        wait_until(lambda: hub.log().count("on screen") >= 2 and playing(), 20, "the media back after stop-app")
        sim.control({"command": "reboot", "downFor": 2})
        wait_until(lambda: hub.log().count("on screen") >= 3 and playing(), 40, "the media back after the reboot")
    finally:
        hub.stop()
        assert sim.stop() == 0
    # Every interval, however short: here the job casts again within milliseconds of the
    # stop-app (by default, spells under 0.1 s fold into the next interval as transitions).
    result = castline(netns, "logs", "report", "--by", "device", "--json", "--transitions", "0", log)
    assert result.returncode == 0, result.stderr
    [screen] = json.loads(result.stdout)["devices"]
    intervals = screen["intervals"]
    kinds = [(i["kind"], i["cause"]) for i in intervals]
    # The stop-app: the app closed, not shown until the job cast again.
    assert any(k == "not_shown" and c and c.startswith("app closed") for k, c in kinds), kinds
    # The drop and the reboot: castline could not see the device; neither shown nor dark.
    blind = [i for i in intervals if i["kind"] == "not_observed" and i["cause"].startswith("the link was")]
    assert len(blind) >= 2 and all(i["to"] > i["from"] for i in blind), kinds
    shown = [i for i in intervals if i["kind"] == "shown"]
    assert len(shown) >= 3 and {i["content"] for i in shown} == {"http://media.invalid/loop.mp4"}, shown
    assert abs(screen["shown_seconds"] - sum(i["seconds"] for i in shown)) < 0.01
    # The intervals tile the screen's time, in order.
    assert all(a["to"] == b["from"] for a, b in zip(intervals, intervals[1:])), intervals
    text = castline(netns, "logs", "report", log, "--timezone", "UTC", "--transitions", "0").stdout
    assert "not shown: app closed" in text and "not observed: the link was" in text and "(UTC, UTC+00:00)" in text, text
    page = os.path.join(workdir, "report.html")
    written = castline(netns, "logs", "report", "--html", page, "--transitions", "0", log)   # a file, as timeline --html takes
    assert written.returncode == 0 and f"wrote {page}" in written.stderr, written.stderr
    png = os.path.join(workdir, "report.png")
    run_chromium(f"--screenshot={png}", "--window-size=1200,800", "file://" + page)
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    dom, _, _ = run_chromium("--dump-dom", "--window-size=1200,800", "file://" + page)
    assert 'class="screen"' in dom and dom.count('class="not_observed"') >= 2 and 'class="not_shown"' in dom, dom[:3000]
    assert '<table id="fleet"' in dom and 'class="axis"' in dom, dom[:3000]


@pytest.mark.needs_root("a network namespace (ip netns)")
def test_stats_names_a_page_server_that_is_down(netns, workdir):
    """A site job's page server stopped (by its PID): the next show of the page fails its
    pre-flight, and `logs stats` lists the server (scheme://host:port) as a cause of its own, the
    page's gap names it, and the timeline's story shows it on the TV's lane."""
    import page_server
    from conftest import Simulator
    from hub import Hub
    from test_field_castline import site_jobs
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "1"])
    pages, base_url = page_server.start(netns)
    name = sim.ready["devices"][0]["name"]
    log = os.path.join(workdir, "hub.jsonl")
    hub = None
    try:
        hub = Hub(netns, sim, workdir, jobs=site_jobs(("board", name, f'"{base_url}/board.html"')), json_log=log)
        wait_until(lambda: ((sim.control({"command": "list"})["devices"][0]["state"].get("app") or {}).get("page") or {}).get("url")
                   == f"{base_url}/board.html", 20, "the page up")
        page_server.stop(pages)   # the server is down; the TV shows the page it has
        pages = None
        assert sim.control({"command": "stop-app", "device": 0})["ok"]   # the job shows the page again: its pre-flight fails
        wait_until(lambda: "is down" in hub.log(), 20, "castline finds the server down")
        assert hub.stop() == 0
    finally:
        if hub and hub.process.poll() is None:
            hub.stop()
        if pages:
            page_server.stop(pages)
        sim.stop()
    result = netns.run(castline_binary(), "logs", "stats", "--json", log)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    [down] = stats["serversDown"]
    assert down["server"] == base_url and down["count"] >= 1 and down["devices"] == [name], down
    assert "refused" in down["reason"].lower(), down
    [screen] = stats["screens"]
    assert any(base_url in g["reason"] for g in screen["gaps"]), screen["gaps"]
    text = netns.run(castline_binary(), "logs", "stats", log)
    assert f"  {base_url}: " in text.stdout, text.stdout
    page = os.path.join(workdir, "timeline.html")
    written = netns.run(castline_binary(), "logs", "timeline", "--html", page, log)
    assert written.returncode == 0, written.stderr
    with open(page) as f:
        html = f.read()
    assert f"server down: {base_url}" in html and 'class="story-event server"' in html
