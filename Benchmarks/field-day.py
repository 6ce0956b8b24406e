#!/usr/bin/env python3
"""The field day (issue 47): a fleet of simulated TVs with the field profiles of real models
(idle closes, ambient covers, daily reboots, CANCELLED launches), their timers compressed by
`--scale` (60: a day in 24 minutes), under a seeded schedule of injected faults (cover/uncover,
standby, another HDMI input, a LAUNCH that hangs), kept busy by `castline run` with one job per
TV: DashCast pages (site jobs), playlists, one long media, schedules (a page, a media entry in
the middle of the run). The same day can be run against a naive recaster (pychromecast in a
loop: cast the page or media again to each TV every N device-seconds, as users do today).

Every second the simulator's own view (control socket `list`) is sampled, and castline's
(`GET /v1/devices`). Reported, per profile and job kind and in total:

- screen time: the share of counted samples in which the TV visibly shows what its job wants:
  the job's app runs, its content (the page's URL, one of the playlist's items PLAYING or
  BUFFERING) is the one wanted now, `state.screen.app_visible` is true (speakers: no screen, the
  media alone), DashCast's page is not blocked. Goal >= 99 %. Samples left out (EXCLUSIONS below,
  printed with the report): warm-up, a device down in a reboot, standby or another input on a TV
  castline cannot both see and wake (no HDMI-CEC fields, or no one-touch play; every job here has
  `screen_off: wake` when the binary takes it), a screensaver put up by the control socket (no
  device reports it; `screen_pct_with_control_covers` counts it), and the seconds right after a
  schedule's switch. Ambient covers of the profiles themselves count;
- needless relaunches: LAUNCHes in the simulator's frame log that no loss explains. Goal 0;
- relaunches per device-hour on the profiles whose idle timer only media resets;
- recovery: from the first sample of each loss (app gone, covered, back from a reboot, other
  content) to the first sample showing the job's content again, p50/p99, in wall seconds and
  in device seconds (x scale);
- castline's `screen.visible` against the simulator's `app_visible`, outside 2 s of a change of
  the latter and outside control-socket covers (which no device reports; counted apart), null
  counted apart, as "castline says it does not know"; "not available" while the API has no
  `screen` field.

Inside a network namespace this script creates (only lo; no mDNS). Every process it starts is
stopped by its PID. Output: a text report, or with --json one JSON object (the last line).

    sudo .venv/bin/python Benchmarks/field-day.py --bin .build/debug/castline [--tvs 30]
         [--duration 1440] [--scale 60] [--seed 47] [--castline | --naive | --both | --modes LIST]
         [--receiver] [--naive-interval 60] [--real-launch-times] [--json] [--json-out FILE] [--keep]
    .venv/bin/python Benchmarks/field-day.py --reanalyse DIR...   (days kept with --keep)

--receiver adds a castline day whose pages on the profiles that only media keeps alive use
castline's own receiver page (the opt-in keep-alive), for relaunches per hour with and without
it; skipped (with a note) when the binary's config has no `site.receiver`. The plugins must lie
next to the binary (libCastlinePlugin*.so). castline's learned idle closes go to a state folder of
the day's own (CASTLINE_STATE_DIR). (CI: Tests/Conformance/test_field_day.py, 200 s.)
"""
import argparse
import datetime
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402
import page_server  # noqa: E402

DASHCAST = "84912283"


def castline_receiver_app_id():
    """The app id the simulator knows castline's own receiver page by (Sources/CastCore/
    CastlineReceiver.swift, or $FIELD_DAY_RECEIVER_APP_ID for a binary built from another tree),
    None in a tree without it."""
    if os.environ.get("FIELD_DAY_RECEIVER_APP_ID"):
        return os.environ["FIELD_DAY_RECEIVER_APP_ID"].upper()
    path = os.path.join(REPO, "Sources", "CastCore", "CastlineReceiver.swift")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        found = re.search(r'simulatorAppID\s*=\s*"([0-9A-Fa-f]{8})"', f.read())
    return found.group(1).upper() if found else None

MEDIA_APP = "CC1AD845"
BACKDROP = "E8C28D3C"
RECEIVER_NS = "urn:x-cast:com.google.cast.receiver"

# What each built-in profile does that `list` does not show (Sources/CastCore/FieldProfile.swift):
# whether RECEIVER_STATUS carries isStandBy/isActiveInput, whether a LAUNCH wakes the TV and takes
# its input (one-touch play), what resets the idle timer.
PROFILES = {
    "chromecast": {"model": "Chromecast", "cec": True, "takes_input": True, "reset": "any-message", "video": True},
    "nest-hub": {"model": "Google Nest Hub", "cec": False, "takes_input": False, "reset": "media", "video": True},
    "nest-hub-fuchsia": {"model": "Google Nest Hub", "cec": False, "takes_input": False, "reset": "media", "video": True},
    "chromecast-google-tv": {"model": "Chromecast with Google TV", "cec": False, "takes_input": True, "reset": "media", "video": True},
    "cast-tv": {"model": "Sony BRAVIA 4K", "cec": False, "takes_input": False, "reset": "media", "video": True},
    "speaker": {"model": "Google Nest Mini", "cec": False, "takes_input": False, "reset": "media", "video": False},
}
# The fleet: (profile, job kind) per TV, in this order (a --tvs smaller than 30 keeps a mix).
FLEET = [
    ("chromecast", "page"), ("nest-hub", "page"), ("chromecast-google-tv", "page"), ("cast-tv", "page"),
    ("nest-hub-fuchsia", "page"), ("chromecast", "playlist"), ("nest-hub", "playlist"), ("chromecast-google-tv", "playlist"),
    ("cast-tv", "playlist"), ("speaker", "audio"), ("chromecast", "schedule"), ("chromecast-google-tv", "schedule"),
    ("cast-tv", "schedule"), ("chromecast", "media"), ("nest-hub-fuchsia", "playlist"), ("chromecast", "page"),
    ("nest-hub", "page"), ("chromecast-google-tv", "page"), ("cast-tv", "page"), ("chromecast", "page"),
    ("nest-hub", "page"), ("chromecast-google-tv", "media"), ("cast-tv", "media"), ("nest-hub-fuchsia", "page"),
    ("chromecast", "playlist"), ("nest-hub", "playlist"), ("speaker", "audio"), ("chromecast", "page"),
    ("chromecast-google-tv", "page"), ("cast-tv", "playlist"),
]
ITEMS = [f"http://media.invalid/field/item-{i}.mp4" for i in range(1, 4)]
AUDIO = [f"http://media.invalid/field/song-{i}.mp3" for i in range(1, 4)]
LONG = "http://media.invalid/field/signage-loop.mp4"
NOON = "http://media.invalid/field/noon-special.mp4"
RULES = [{"contentId": "*item-*", "duration": 25}, {"contentId": "*song-*", "duration": 20},
         {"contentId": "*signage-loop*", "duration": 86400}, {"contentId": "*noon-special*", "duration": 86400}]
# Injected faults, per TV and device-day; each lasts a drawn number of device-minutes.
FAULT_RATES = {"cover": 3.0, "standby": 1.0, "input": 1.0, "launch-hang": 1.0}
FAULT_MINUTES = {"cover": (5, 30), "standby": (20, 90), "input": (10, 40), "launch-hang": (0, 0)}
WARMUP = 20.0            # wall seconds before sampling counts (the first casts)
SWITCH_GRACE = 3.0       # wall seconds after a schedule's switch left out
TRANSITION = 2.0         # agreement: samples within this of a change of the truth are left out
EXPLAIN_WINDOW = 3.0
RECONNECT_GRACE = 5.0    # agreement: castline's null this soon after a reboot's end is counted apart     # wall seconds before a LAUNCH in which a loss explains it
UNPREVENTABLE = ("reboot-down", "standby-unwakeable", "input-unseen", "cover-unseen")
MEDIA_RESET_PROFILES = ("nest-hub", "nest-hub-fuchsia", "chromecast-google-tv", "cast-tv")

EXCLUSIONS = {
    "warm-up": f"the first {WARMUP:.0f} wall seconds (the first casts)",
    "reboot-down": "the device is down (list: down=true): a daily or injected reboot's downtime",
    "standby-unwakeable": "state.screen.shows == off on a TV whose profile lacks HDMI-CEC fields or one-touch play "
                          "(castline can neither see nor end it): all but chromecast",
    "input-unseen": "state.screen.shows == other-input on such a TV",
    "cover-unseen": "state.screen.covered_by == control: a screensaver put up by the control socket's cover, which no "
                    "device reports on the wire and no profile predicts (ambient covers, covered_by == ambient, count); "
                    "screen_pct_with_control_covers counts them too",
    "schedule-switch": f"{SWITCH_GRACE:.0f} wall seconds after a schedule's switch (no sender shows new content at once)",
}


def device_name(i):
    return f"TV {i:02d}"


def device_uuid(i, seed):
    return f"{(0xf1e1d000 + seed) & 0xffffffff:08x}{i:024x}"


class Fleet:
    """The TVs, their profiles and jobs, and what each job wants at a moment."""

    def __init__(self, tvs, base, run_start_wall, duration, receiver=None):
        self.tvs = tvs
        # castline's receiver page (the opt-in keep-alive) for pages on the profiles whose idle
        # timer only media resets; None: DashCast everywhere.
        self.receiver = receiver
        self.layout = [FLEET[i % len(FLEET)] for i in range(tvs)]
        self.base = base
        # A schedule's media entry covers [35 %, 65 %) of the measured run, a page otherwise.
        self.entry_from = int(run_start_wall + WARMUP + 0.35 * duration) + 1
        self.entry_to = int(run_start_wall + WARMUP + 0.65 * duration) + 1

    def profile(self, i):
        return self.layout[i][0]

    def kind(self, i):
        return self.layout[i][1]

    def page(self, i):
        return f"{self.base}/board-{i:02d}.html"

    def fallback(self, i):
        return f"{self.base}/fallback-{i:02d}.html"

    def wants(self, i, wall):
        """(app id, set of acceptable contents): a page URL, or media content ids."""
        kind = self.kind(i)
        if kind == "page":
            return self.page_app(i), {self.page(i)}
        if kind == "playlist":
            return MEDIA_APP, set(ITEMS)
        if kind == "audio":
            return MEDIA_APP, set(AUDIO)
        if kind == "media":
            return MEDIA_APP, {LONG}
        if self.entry_from <= wall < self.entry_to:
            return MEDIA_APP, {NOON}
        return self.page_app(i), {self.fallback(i)}

    def uses_receiver(self, i):
        return self.receiver is not None and PROFILES[self.profile(i)]["reset"] == "media"

    def page_app(self, i):
        return self.receiver if self.uses_receiver(i) else DASHCAST

    def switches(self):
        return [self.entry_from, self.entry_to] if "schedule" in {k for _, k in self.layout} else []

    def wakeable(self, i):
        p = PROFILES[self.profile(i)]
        return p["cec"] and p["takes_input"]


def sim_config(fleet, seed, scale, run_start_wall, duration, real_launch_times, rng):
    devices = []
    for i in range(fleet.tvs):
        profile = fleet.profile(i)
        spec = PROFILES[profile]
        device = {"name": device_name(i), "uuid": device_uuid(i, seed), "model": spec["model"],
                  "address": f"127.0.0.{10 + i}", "profile": profile}
        if not spec["video"]:
            device["video"] = False
        field = {}
        if profile == "chromecast":
            # The daily reboot's window (15:00-16:00 local, stestagg/dashcast#20) moved into the
            # measured run: with a day of 86400/scale s the real window falls in it only at some
            # hours of the wall clock. In scaled seconds the device's day position starts at its
            # local time of day / scale (FieldDayClock); a window there at a seeded point.
            local = datetime.datetime.now()
            seconds_of_day = local.hour * 3600 + local.minute * 60 + local.second
            day_wall = 86400 / scale
            offset_wall = WARMUP + rng.uniform(0.1, 0.8) * min(duration, day_wall)
            start = (seconds_of_day + offset_wall * scale) % 86400
            field["dailyReboot"] = {"windowStart": round(start, 1), "windowLength": min(600, 86400 - 1), "downFor": 60}
        if real_launch_times:
            # Keep launch latencies as a real device has them (the scale divides them too).
            base_ready = {"chromecast": 1, "nest-hub": 2.1, "nest-hub-fuchsia": 2.1, "chromecast-google-tv": 2,
                          "cast-tv": 2, "speaker": 1}[profile]
            field["launch"] = {"readyAfter": min(86400, base_ready * scale)}
            if profile in ("nest-hub", "nest-hub-fuchsia"):
                field["launch"]["pageAppExtra"] = 10 * scale
        if field:
            device["field"] = field
        devices.append(device)
    return {"devices": devices, "mediaRules": RULES}


def fault_schedule(fleet, rng, duration, scale):
    """[(wall offset from the run's t0, tv, kind, wall seconds it lasts)], seeded. Faults on one TV
    never overlap (a gap of 10 wall seconds at least between them)."""
    device_days = duration * scale / 86400
    events = []
    busy = {i: [] for i in range(fleet.tvs)}
    for kind, rate in FAULT_RATES.items():
        count = int(round(rate * device_days * fleet.tvs))
        for _ in range(count):
            for _attempt in range(50):
                tv = rng.randrange(fleet.tvs)
                if kind in ("standby", "input") and not PROFILES[fleet.profile(tv)]["video"]:
                    continue
                lo, hi = FAULT_MINUTES[kind]
                length = rng.uniform(lo, hi) * 60 / scale
                at = rng.uniform(0.02, 0.95) * duration
                if at + length > duration * 0.97:
                    continue
                if any(at - 10 < b and a < at + length + 10 for a, b in busy[tv]):
                    continue
                busy[tv].append((at, at + length))
                events.append((at, tv, kind, length))
                break
    return sorted(events)


def jobs_yaml(fleet, features):
    lines = ["jobs:"]
    for i in range(fleet.tvs):
        kind = fleet.kind(i)
        name = f"tv-{i:02d}-{kind}"
        lines.append(f"  - name: {name}")
        lines.append(f"    devices: [\"{device_name(i)}\"]")
        receiver = ", receiver: castline" if fleet.uses_receiver(i) else ""
        if kind == "page":
            lines.append(f"    site: {{url: \"{fleet.page(i)}\"{receiver}}}")
        elif kind == "playlist":
            lines.append(f"    media: {{items: {json.dumps(ITEMS)}, repeat: all}}")
        elif kind == "audio":
            lines.append(f"    media: {{items: {json.dumps(AUDIO)}, repeat: all, content_type: audio/mpeg}}")
        elif kind == "media":
            lines.append(f"    media: {{url: \"{LONG}\"}}")
        else:
            at = lambda t: time.strftime("%H:%M:%S", time.gmtime(t))  # noqa: E731
            lines.append("    timezone: UTC")
            lines.append("    schedule:")
            lines.append(f"      - {{days: daily, from: \"{at(fleet.entry_from)}\", to: \"{at(fleet.entry_to)}\", media: \"{NOON}\"}}")
            lines.append(f"    fallback: {{site: {{url: \"{fleet.fallback(i)}\"{receiver}}}}}")
        if features.get("screen_off"):
            lines.append("    screen_off: wake")
    return "\n".join(lines) + "\n"


def config_accepts(workdir, text):
    """Whether `castline config check` accepts a config (no plugins loaded): (ok, its output)."""
    path = os.path.join(workdir, "probe.yaml")
    with open(path, "w") as f:
        f.write(text)
    result = subprocess.run([conftest.castline_binary(), "config", "check", "--no-plugins", path],
                            capture_output=True, text=True, timeout=60)
    return result.returncode == 0, (result.stdout + result.stderr).strip()


def probe_features(workdir, scale, want_scale):
    """What the binary's config accepts: daemon.field_time_scale, a job's screen_off."""
    features, notes = {}, []
    if want_scale:
        ok, out = config_accepts(workdir, f"daemon: {{field_time_scale: {scale}}}\n")
        features["field_time_scale"] = ok
        if not ok:
            notes.append(f"daemon.field_time_scale refused by this binary ({out.splitlines()[-1] if out else 'no output'}): "
                         "castline runs with unscaled profile timings")
    receiver = castline_receiver_app_id()
    if receiver:
        ok, out = config_accepts(workdir, f"daemon: {{castline_receiver_app_id: {receiver}}}\njobs:\n"
                                          "  - {name: a, devices: [x], site: {url: \"http://127.0.0.1/a\", receiver: castline}}\n")
        features["castline_receiver"] = receiver if ok else False
    else:
        features["castline_receiver"] = False
    ok, out = config_accepts(workdir, "jobs:\n  - {name: a, devices: [x], site: \"http://127.0.0.1/a\", screen_off: wake}\n")
    features["screen_off"] = ok
    if not ok:
        notes.append("jobs[].screen_off refused by this binary: no job policy set (standby/input counted only where "
                     "castline could see and wake them)")
    return features, notes


# ---------------------------------------------------------------------------------------------
# The naive recaster: pychromecast in one process (run in the namespace), a thread per TV that
# casts the job's page or media again every N seconds. pychromecast's writes are serialised with
# a lock (Benchmarks/catt_serialised.py): under a time scale a LAUNCH is answered within
# milliseconds, which sets off pychromecast#1030 (two threads writing one TLS socket) on every
# profile; real devices take a second or more.

def naive_worker(spec_path):
    import uuid as uuidlib

    import pychromecast
    import pychromecast.socket_client as socket_client
    from pychromecast.controllers.dashcast import DashCastController

    lock = threading.RLock()
    original = socket_client.SocketClient.send_message

    def send_message(self, *args, **kwargs):
        with lock:
            return original(self, *args, **kwargs)
    socket_client.SocketClient.send_message = send_message

    with open(spec_path) as f:
        spec = json.load(f)
    interval, end_at = spec["interval"], time.time() + spec["seconds"]
    counts = {}

    def one(tv):
        device = spec["devices"][tv]
        sent = 0
        try:
            cast = pychromecast.get_chromecast_from_host(
                (device["address"], device["castPort"], uuidlib.UUID(device["uuid"]), device["model"], device["name"]),
                tries=None, retry_wait=1, timeout=5)
            cast.wait(timeout=30)
            dash = DashCastController()
            cast.register_handler(dash)
            k = 0
            while time.time() < end_at:
                wall = time.time()
                want = spec["wants"][tv]
                if want["kind"] == "schedule":
                    content = want["media"] if want["from"] <= wall < want["to"] else want["page"]
                    is_page = content == want["page"]
                else:
                    content = want["contents"][k % len(want["contents"])]
                    is_page = want["kind"] == "page"
                    k += 1
                try:
                    if is_page:
                        dash.load_url(content, force=True)
                    else:
                        cast.media_controller.play_media(content, "audio/mpeg" if content.endswith(".mp3") else "video/mp4")
                    sent += 1
                except Exception as error:   # noqa: BLE001 (a naive loop goes on)
                    print(json.dumps({"naive_error": str(error)[:200], "tv": tv}), flush=True)
                time.sleep(max(0.05, min(interval, end_at - time.time())))
            cast.disconnect(timeout=5)
        except Exception as error:   # noqa: BLE001
            print(json.dumps({"naive_error": str(error)[:200], "tv": tv}), flush=True)
        counts[tv] = sent

    threads = [threading.Thread(target=one, args=(tv,), daemon=True) for tv in range(len(spec["devices"]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=spec["seconds"] + 60)
    print(json.dumps({"naive_casts": counts}), flush=True)
    os._exit(0)   # pychromecast's socket threads of a device still rebooting must not hold the exit


# ---------------------------------------------------------------------------------------------

def api_devices(socket_path):
    from hub import api
    try:
        status, body, _ = api(socket_path, "GET", "/v1/devices")
    except OSError:
        return None
    return {d.get("device"): d for d in body.get("devices", [])} if status == 200 else None


def truth(device):
    """The simulator's view of one TV in a sample."""
    state = device.get("state") or {}
    app = state.get("app") or {}
    media = state.get("media") or {}
    screen = state.get("screen")
    field = state.get("field") or {}
    return {
        "down": bool(device.get("down")),
        "app": app.get("appId"), "session": app.get("sessionId"), "idle_screen": bool(app.get("isIdleScreen")),
        "page": (app.get("page") or {}).get("url"), "blocked": (app.get("page") or {}).get("blocked"),
        "content": media.get("contentId"), "player": media.get("playerState"),
        "shows": screen.get("shows") if screen else None,
        "visible": screen.get("app_visible") if screen else None,
        "covered_by": screen.get("covered_by") if screen else None,
        "pending": field.get("launchPending"),
    }


def is_good(view, app, contents):
    if view["down"] or view["app"] != app:
        return False
    if view["visible"] is False:
        return False
    if app != MEDIA_APP:
        return view["page"] in contents and not view["blocked"]
    return view["content"] in contents and view["player"] in ("PLAYING", "BUFFERING")


def loss_cause(view, app, contents):
    """Why a sample does not show the job's content."""
    if view["down"]:
        return "down"
    if view["shows"] == "off":
        return "standby"
    if view["shows"] == "other-input":
        return "other-input"
    if view["covered_by"]:
        return f"covered-{view['covered_by']}"
    if view["pending"]:
        return f"launch-{view['pending']}"
    if view["app"] is None or view["idle_screen"]:
        return "no-app"
    if view["app"] != app:
        return "other-app"
    if view["blocked"]:
        return "page-blocked"
    if app != MEDIA_APP:
        return "other-page"
    if view["content"] not in contents:
        return "other-media"
    return f"media-{view['player']}"


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, int(math.ceil(p / 100 * len(ordered))) - 1))
    return ordered[k]


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def read_frames(path, device_index):
    """The frames and events the analysis needs, as (wall time, tv, what, detail), read line by line."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if '"LAUNCH' not in line and '"CLOSE"' not in line and '"fault"' not in line and '"opened"' not in line \
                    and '"LOAD"' not in line and '"QUEUE_LOAD"' not in line:
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                continue
            tv = device_index.get(frame.get("device"))
            if tv is None or not frame.get("time"):
                continue
            t = parse_time(frame["time"])
            kind, direction = frame.get("type"), frame.get("direction")
            if frame.get("event") == "fault":
                out.append((t, tv, "fault", frame.get("kind")))
            elif frame.get("event") == "opened":
                out.append((t, tv, "opened", None))
            elif frame.get("event") != "frame":
                continue
            elif kind == "LAUNCH" and direction == "in":
                out.append((t, tv, "launch", (frame.get("payload") or {}).get("appId")))
            elif kind == "LAUNCH_ERROR" and direction == "out":
                out.append((t, tv, "launch-error", (frame.get("payload") or {}).get("reason")))
            elif kind == "CLOSE" and direction == "out" and frame.get("source") != "receiver-0":
                out.append((t, tv, "app-closed", frame.get("source")))
            elif kind in ("LOAD", "QUEUE_LOAD") and direction == "in":
                out.append((t, tv, "load", None))
    return out


def run_day(args, mode, notes):
    """One field day with `mode` ("castline" or "naive"); returns the report as a dict."""
    os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    rng = random.Random(args.seed)
    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix=f"castline-field-day-{mode}-")
    os.chmod(workdir, 0o755)
    processes, hub, sim = [], None, None
    features = {}
    try:
        castline_mode = mode.startswith("castline")
        if castline_mode:
            features, feature_notes = probe_features(workdir, args.scale, not args.no_castline_scale)
            notes.extend(n for n in feature_notes if n not in notes)
            if mode == "castline+receiver" and not features.get("castline_receiver"):
                notes.append("castline+receiver: this binary takes no site.receiver: castline / daemon.castline_receiver_app_id; "
                             "day skipped")
                return None
        pages, base = page_server.start(netns)
        processes.append(pages)
        run_start_wall = time.time()
        fleet = Fleet(args.tvs, base, run_start_wall, args.duration,
                      receiver=features.get("castline_receiver") if mode == "castline+receiver" else None)
        config = sim_config(fleet, args.seed, args.scale, run_start_wall, args.duration, args.real_launch_times, rng)
        faults = fault_schedule(fleet, rng, args.duration, args.scale)
        sim_path = os.path.join(workdir, "sim.json")
        with open(sim_path, "w") as f:
            json.dump(config, f)
        sim = conftest.Simulator(netns, workdir, launch_delay=None,
                                 extra=["--no-mdns", "--config", sim_path, "--field-time-scale", str(args.scale)])
        devices = sim.ready["devices"]
        index_of = {d["uuid"]: i for i, d in enumerate(devices)}
        if castline_mode:
            from hub import Hub
            daemon_keys = [f"field_time_scale: {args.scale}"] if features.get("field_time_scale") else []
            if fleet.receiver:
                daemon_keys.append(f"castline_receiver_app_id: {fleet.receiver}")
            daemon_extra = ", ".join(daemon_keys)
            # Learned idle closes go to field-learned.json in the state folder: this day's own, never
            # the user's (~/.local/state/castline) nor the last run's.
            state_dir = os.path.join(workdir, "state")
            os.makedirs(state_dir, exist_ok=True)
            hub = Hub(netns, sim, workdir, jobs=jobs_yaml(fleet, features), daemon_extra=daemon_extra,
                      env=dict(os.environ, CASTLINE_STATE_DIR=state_dir),
                      log_rules="info,CastChannel.*:warning", media_roots=(),
                      devices=[{"name": d["name"], "address": d["address"], "castPort": d["castPort"]} for d in devices])
        else:
            spec = {"interval": args.naive_interval / args.scale, "seconds": WARMUP + args.duration + 5,
                    "devices": [dict(d, model=PROFILES[fleet.profile(i)]["model"]) for i, d in enumerate(devices)],
                    "wants": []}
            for i in range(fleet.tvs):
                kind = fleet.kind(i)
                if kind == "schedule":
                    spec["wants"].append({"kind": kind, "from": fleet.entry_from, "to": fleet.entry_to, "media": NOON,
                                          "page": fleet.fallback(i)})
                else:
                    spec["wants"].append({"kind": kind, "contents": sorted(fleet.wants(i, 0)[1])})
            spec_path = os.path.join(workdir, "naive.json")
            with open(spec_path, "w") as f:
                json.dump(spec, f)
            naive_log = open(os.path.join(workdir, "naive.out"), "w")
            processes.append(subprocess.Popen(netns.command(conftest.PYTHON, os.path.abspath(__file__), "--naive-worker", spec_path),
                                              stdout=naive_log, stderr=subprocess.STDOUT))
        t0 = time.monotonic() + WARMUP
        wall_offset = time.time() - time.monotonic()
        injected = []   # (wall time, tv, kind, phase)

        def control(command):
            try:
                reply = sim.control(command)
            except OSError as error:
                reply = {"ok": False, "error": str(error)}
            return reply

        def injector():
            pending = []
            for at, tv, kind, length in faults:
                if kind == "launch-hang":
                    pending.append((at, tv, {"command": "launch-hang", "device": tv, "count": 1}, kind, "start"))
                elif kind == "cover":
                    pending.append((at, tv, {"command": "cover", "device": tv}, kind, "start"))
                    pending.append((at + length, tv, {"command": "uncover", "device": tv}, kind, "end"))
                elif kind == "standby":
                    pending.append((at, tv, {"command": "standby", "device": tv, "enabled": True}, kind, "start"))
                    pending.append((at + length, tv, {"command": "standby", "device": tv, "enabled": False}, kind, "end"))
                else:
                    pending.append((at, tv, {"command": "input", "device": tv, "active": False}, kind, "start"))
                    pending.append((at + length, tv, {"command": "input", "device": tv, "active": True}, kind, "end"))
            for at, tv, command, kind, phase in sorted(pending, key=lambda p: p[0]):
                time.sleep(max(0, t0 + at - time.monotonic()))
                if stop_event.is_set():
                    return
                reply = control(command)
                injected.append((time.time(), tv, kind, phase, bool(reply.get("ok"))))

        stop_event = threading.Event()
        injector_thread = threading.Thread(target=injector, daemon=True)
        injector_thread.start()

        samples = []   # (wall, tv, view, castline screen or None, castline device present)
        api_screen_seen = False
        end_at = t0 + args.duration
        next_sample = time.monotonic()
        while time.monotonic() < end_at:
            next_sample += 1.0
            wall = time.time()
            listing = control({"command": "list"})
            by_name = api_devices(hub.socket) if hub else None
            if listing.get("ok"):
                for d in listing["devices"]:
                    tv = d["index"]
                    if tv >= fleet.tvs:
                        continue
                    castline = None
                    if by_name is not None:
                        entry = by_name.get(device_name(tv))
                        if entry is not None and "screen" in entry:
                            api_screen_seen = True
                            castline = entry.get("screen") or {}
                    samples.append((wall, tv, truth(d), castline))
            time.sleep(max(0, next_sample - time.monotonic()))
        stop_event.set()
        if hub:
            hub_log = hub.log()
            hub.stop()
        else:
            hub_log = ""
        for process in processes:
            conftest.stop_process(process)
        sim.stop()
        frames = read_frames(sim.frame_log, index_of)
        if args.keep:
            # Everything the analysis reads, for --reanalyse.
            with open(os.path.join(workdir, "day.json"), "w") as f:
                json.dump({"mode": mode, "args": {"scale": args.scale, "duration": args.duration, "seed": args.seed},
                           "fleet": {"tvs": fleet.tvs, "base": fleet.base, "entry_from": fleet.entry_from, "entry_to": fleet.entry_to,
                                     "receiver": fleet.receiver},
                           "samples": samples, "frames": frames, "injected": injected, "faults": faults,
                           "t0_wall": t0 + wall_offset, "features": features, "api_screen_seen": api_screen_seen}, f)
        report = analyse(args, mode, fleet, samples, frames, injected, faults, t0 + wall_offset, features, api_screen_seen)
        report["daemon_warnings"] = [line for line in hub_log.splitlines() if " WARN" in line or " ERROR" in line][-20:]
        report["workdir"] = workdir if args.keep else None
        return report
    finally:
        if hub and hub.process.poll() is None:
            hub.stop()
        for process in processes:
            conftest.stop_process(process)
        if sim and sim.process.poll() is None:
            sim.stop()
        netns.close()
        if not args.keep:
            import shutil
            shutil.rmtree(workdir, ignore_errors=True)


def analyse(args, mode, fleet, samples, frames, injected, faults, t0_wall, features, api_screen_seen):
    scale = args.scale
    switches = fleet.switches()
    per_tv = {i: [] for i in range(fleet.tvs)}
    for wall, tv, view, castline in samples:
        per_tv[tv].append((wall, view, castline))
    excluded = {key: 0 for key in EXCLUSIONS}
    lost = {}
    groups = {}   # (profile, kind) -> [good, counted]
    counted_total = good_total = 0
    episodes = []   # recovery: {tv, cause, wall_s}
    agreement = {"agree": 0, "disagree": 0, "null": 0, "judged": 0, "examples": [], "null_by_profile": {},
                 "disagree_kinds": {}, "disagree_by_group": {}, "control_cover": {}}
    per_tv_screen = {}
    cover_counted = [0, 0]   # control-covered samples: counted, good
    lost_by_group = {}
    for tv, rows in per_tv.items():
        key = (fleet.profile(tv), fleet.kind(tv))
        group = groups.setdefault(key, [0, 0, 0])
        good_tv = counted_tv = 0
        episode = None
        last_down = -1e18
        visible_changes = [rows[k][0] for k in range(1, len(rows)) if rows[k][1]["visible"] != rows[k - 1][1]["visible"]]
        for wall, view, castline in rows:
            app, contents = fleet.wants(tv, wall)
            good = is_good(view, app, contents)
            reason = None
            if wall < t0_wall:
                reason = "warm-up"
            elif view["down"]:
                reason = "reboot-down"
            elif view["shows"] in ("off", "other-input"):
                if not fleet.wakeable(tv):
                    reason = "standby-unwakeable" if view["shows"] == "off" else "input-unseen"
            elif view["covered_by"] == "control":
                reason = "cover-unseen"
            elif any(0 <= wall - s < SWITCH_GRACE for s in switches) and fleet.kind(tv) == "schedule":
                reason = "schedule-switch"
            # Recovery episodes: from the first sample that does not show the content (a device
            # back from a reboot: its first sample up) to the first that does.
            if wall >= t0_wall:
                if good:
                    if episode is not None:
                        episode["wall_s"] = wall - episode["start"]
                        episodes.append(episode)
                        episode = None
                elif episode is None and reason not in UNPREVENTABLE:
                    episode = {"tv": tv, "start": wall, "cause": loss_cause(view, app, contents), "profile": fleet.profile(tv),
                               "kind": fleet.kind(tv)}
                elif episode is not None and reason in UNPREVENTABLE:
                    episode = None   # the loss ran into a moment no sender can prevent: not castline's to recover
            if reason == "cover-unseen":
                cover_counted[0] += 1
                cover_counted[1] += good
            if reason:
                excluded[reason] += 1
            else:
                counted_tv += 1
                good_tv += good
                if not good:
                    cause = loss_cause(view, app, contents)
                    lost[cause] = lost.get(cause, 0) + 1
                    by_group = lost_by_group.setdefault(f"{key[0]}/{key[1]}", {})
                    by_group[cause] = by_group.get(cause, 0) + 1
            if view["down"]:
                last_down = wall
            # Agreement of castline's screen field with the truth (video TVs, device up).
            if castline is not None and wall >= t0_wall and view["visible"] is not None and not view["down"]:
                if any(abs(wall - c) <= TRANSITION for c in visible_changes):
                    continue
                said = castline.get("visible")
                if view["covered_by"] == "control":
                    # No device says a control cover is there (cover-unseen): apart, as in screen time.
                    outcome = "agree" if said == view["visible"] else ("null" if said is None else "disagree")
                    agreement["control_cover"][outcome] = agreement["control_cover"].get(outcome, 0) + 1
                    continue
                agreement["judged"] += 1
                if said is None:
                    agreement["null"] += 1
                    # Right after a reconnect castline has not heard the device yet: apart.
                    where = fleet.profile(tv) if wall - last_down > RECONNECT_GRACE else "within 5 s of a reboot's end"
                    agreement["null_by_profile"][where] = agreement["null_by_profile"].get(where, 0) + 1
                elif said == view["visible"]:
                    agreement["agree"] += 1
                else:
                    agreement["disagree"] += 1
                    kind = f"sim {view['shows']}/{view['covered_by']} vs castline {said}/{castline.get('reason')}/{castline.get('source')}"
                    agreement["disagree_kinds"][kind] = agreement["disagree_kinds"].get(kind, 0) + 1
                    kind = f"{fleet.profile(tv)}/{fleet.kind(tv)}"
                    agreement["disagree_by_group"][kind] = agreement["disagree_by_group"].get(kind, 0) + 1
                    if len(agreement["examples"]) < 20:
                        agreement["examples"].append({"t": round(wall - t0_wall, 1), "tv": tv, "sim": view["shows"],
                                                      "sim_visible": view["visible"], "castline": castline})
        if episode is not None:
            episode["wall_s"] = None
            episodes.append(episode)
        group[0] += good_tv
        group[1] += counted_tv
        group[2] += 1
        counted_total += counted_tv
        good_total += good_tv
        per_tv_screen[tv] = round(100 * good_tv / counted_tv, 2) if counted_tv else None

    # Launches, and which a loss explains.
    by_tv = {i: [] for i in range(fleet.tvs)}
    for t, tv, what, detail in frames:
        by_tv[tv].append((t, what, detail))
    for wall, tv, kind, phase, ok in injected:
        by_tv[tv].append((wall, f"injected-{kind}", phase))
    launches = {i: 0 for i in range(fleet.tvs)}
    loads = {i: 0 for i in range(fleet.tvs)}
    needless, explained_by = [], {}
    sample_index = {tv: [(w, v) for w, v, _ in rows] for tv, rows in per_tv.items()}
    for tv, events in by_tv.items():
        events.sort(key=lambda e: e[0])
        for t, what, detail in events:
            if what == "load" and t >= t0_wall:
                loads[tv] += 1
            if what != "launch" or t < t0_wall:
                continue
            launches[tv] += 1
            reason = None
            app, contents = fleet.wants(tv, t)
            recent = [v for w, v in sample_index[tv] if t - 2.0 <= w <= t]
            bad = [v for v in recent if not is_good(v, app, contents)]
            if bad:
                reason = "showed-not:" + loss_cause(bad[-1], app, contents)
            else:
                for t2, what2, detail2 in events:
                    near = t - EXPLAIN_WINDOW <= t2 < t
                    if near and (what2 in ("app-closed", "launch-error", "fault", "opened") or what2.startswith("injected-")):
                        reason = what2 + (f":{detail2}" if detail2 else "")
                        break
                    if what2 == "launch" and t - 30 <= t2 < t and not any(
                            e[1] == "launch-error" or e[1] == "app-closed" for e in events if t2 < e[0] < t):
                        # A LAUNCH that had no answer before this one: a hung launch retried.
                        prior = [v for w, v in sample_index[tv] if t2 <= w <= t]
                        if any(v["pending"] for v in prior):
                            reason = "retry-of-hung-launch"
                            break
                if reason is None and fleet.kind(tv) == "schedule" and any(0 <= t - s < SWITCH_GRACE + 2 for s in switches):
                    reason = "schedule-switch"
            if reason is None:
                needless.append({"t": round(t - t0_wall, 2), "tv": tv, "profile": fleet.profile(tv), "kind": fleet.kind(tv),
                                 "app": detail, "why": "no loss before it"})
            else:
                key = reason.split(":")[0]
                explained_by[key] = explained_by.get(key, 0) + 1
    # Two LAUNCHes of one app on one TV less than a second apart with no answer between that calls
    # for the second (a LAUNCH_ERROR, the app closed): one loss relaunched twice.
    double = []
    for tv, events in by_tv.items():
        previous = None
        for t, what, detail in events:
            if what in ("launch-error", "app-closed", "opened", "fault") or what.startswith("injected-"):
                previous = None
            elif what == "launch" and t >= t0_wall:
                # (of the same app: a schedule's switch launches another app at once, rightly)
                if previous is not None and t - previous[0] < 1.0 and detail == previous[1]:
                    double.append({"t": round(t - t0_wall, 2), "tv": tv, "gap_s": round(t - previous[0], 3), "app": detail})
                previous = (t, detail)
    # Reaction to an idle close, from the frame log (ms precision, unlike the 1 s samples): from the
    # device's CLOSE of the app to the sender's next LAUNCH on that TV.
    reactions = []
    for tv, events in by_tv.items():
        closed_at = last_launch = None
        for t, what, detail in events:
            if what == "app-closed" and t >= t0_wall and (last_launch is None or t - last_launch > 2.0):
                closed_at = t   # (a CLOSE within 2 s of a LAUNCH is the old app replaced by the new one)
            elif what == "launch":
                if closed_at is not None:
                    reactions.append(t - closed_at)
                closed_at, last_launch = None, t
            elif what in ("fault", "opened"):
                closed_at = None
    sessions = {tv: len({v["session"] for _, v in sample_index[tv] if v["session"]}) for tv in range(fleet.tvs)}
    device_hours = args.duration * scale / 3600
    per_hour = {}
    for profile in MEDIA_RESET_PROFILES:
        for kind in ("page", "schedule", "playlist", "media"):
            tvs = [i for i in range(fleet.tvs) if fleet.profile(i) == profile and fleet.kind(i) == kind]
            if tvs:
                per_hour[f"{profile}/{kind}"] = round(sum(launches[i] for i in tvs) / len(tvs) / device_hours, 2)
    recov = [e["wall_s"] for e in episodes if e["wall_s"] is not None]
    by_cause = {}
    for e in episodes:
        entry = by_cause.setdefault(e["cause"], {"count": 0, "unrecovered": 0, "wall_s": []})
        entry["count"] += 1
        if e["wall_s"] is None:
            entry["unrecovered"] += 1
        else:
            entry["wall_s"].append(e["wall_s"])
    for entry in by_cause.values():
        values = entry.pop("wall_s")
        entry["p50_wall_s"] = None if not values else round(percentile(values, 50), 2)
        entry["p99_wall_s"] = None if not values else round(percentile(values, 99), 2)
    screen_pct = round(100 * good_total / counted_total, 3) if counted_total else None
    group_rows = {f"{p}/{k}": {"tvs": g[2], "counted": g[1], "screen_pct": round(100 * g[0] / g[1], 2) if g[1] else None}
                  for (p, k), g in sorted(groups.items())}
    keepable = [g for (p, k), g in groups.items() if not (PROFILES[p]["reset"] == "media" and k in ("page", "schedule"))]
    keep_good, keep_counted = sum(g[0] for g in keepable), sum(g[1] for g in keepable)
    agreement_report = "not available (GET /v1/devices has no screen field)"
    if api_screen_seen:
        judged = agreement["judged"]
        known = agreement["agree"] + agreement["disagree"]
        agreement_report = {"judged": judged, "agree_pct": round(100 * agreement["agree"] / judged, 3) if judged else None,
                            "agree_pct_when_known": round(100 * agreement["agree"] / known, 3) if known else None,
                            "null_by_profile": agreement["null_by_profile"], "disagree_kinds": agreement["disagree_kinds"],
                            "disagree_by_group": agreement["disagree_by_group"],
                            "in_control_covers_left_out": agreement["control_cover"],
                            "disagree": agreement["disagree"], "null": agreement["null"],
                            "null_pct": round(100 * agreement["null"] / judged, 3) if judged else None,
                            "examples": agreement["examples"]}
    if not mode.startswith("castline"):
        agreement_report = None
    injected_ok = sum(1 for *_, ok in injected if ok)
    return {
        "mode": mode, "tvs": fleet.tvs, "duration_s": args.duration, "scale": scale, "seed": args.seed,
        "device_hours": round(device_hours, 2), "samples": len(samples), "counted": counted_total,
        "screen_pct": screen_pct,
        "screen_pct_with_control_covers": round(100 * (good_total + cover_counted[1]) / (counted_total + cover_counted[0]), 3)
        if counted_total + cover_counted[0] else None,
        "screen_pct_keepable": round(100 * keep_good / keep_counted, 3) if keep_counted else None,
        "groups": group_rows, "per_tv_screen_pct": per_tv_screen,
        "excluded": excluded, "lost_samples_by_cause": dict(sorted(lost.items(), key=lambda kv: -kv[1])),
        "lost_samples_by_group": lost_by_group,
        "longest_recoveries": [dict(e, start=round(e["start"] - t0_wall, 1)) for e in sorted(
            episodes, key=lambda e: -(e["wall_s"] if e["wall_s"] is not None else 1e9))[:8]],
        "launches": sum(launches.values()), "launches_per_tv": launches, "loads": sum(loads.values()),
        "app_sessions_seen": sum(sessions.values()),
        "needless_relaunches": len(needless) + len(double), "needless_unexplained": len(needless),
        "double_launches": len(double), "double_launch_examples": double[:10], "needless": needless[:40], "launches_explained_by": explained_by,
        "relaunches_per_device_hour_media_reset": per_hour,
        "close_to_launch_ms": {"count": len(reactions),
                               "p50": None if not reactions else round(1000 * percentile(reactions, 50)),
                               "p99": None if not reactions else round(1000 * percentile(reactions, 99))},
        "recovery": {"episodes": len(episodes), "unrecovered": sum(1 for e in episodes if e["wall_s"] is None),
                     "p50_wall_s": None if not recov else round(percentile(recov, 50), 2),
                     "p99_wall_s": None if not recov else round(percentile(recov, 99), 2),
                     "p50_device_s": None if not recov else round(percentile(recov, 50) * scale),
                     "p99_device_s": None if not recov else round(percentile(recov, 99) * scale),
                     "by_cause": by_cause},
        "screen_agreement": agreement_report,
        "faults_scheduled": {k: sum(1 for f in faults if f[2] == k) for k in FAULT_RATES},
        "control_commands_ok": f"{injected_ok}/{len(injected)}",
        "daily_reboots": sum(1 for _, _, what, detail in frames if what == "fault" and detail == "daily-reboot"),
        "launch_errors": sum(1 for _, _, what, _ in frames if what == "launch-error"),
        "idle_closes": sum(1 for _, _, what, _ in frames if what == "app-closed"),
        "features": features,
    }


def text_report(reports, notes):
    out = []
    first = reports[0]
    out.append(f"field day: {first['tvs']} TVs, {first['duration_s']:.0f} s at {first['scale']}x "
               f"({first['device_hours']} device-hours each), seed {first['seed']}")
    out.append("exclusions (samples left out of screen time):")
    for key, text in EXCLUSIONS.items():
        out.append(f"  {key:20s} {text}")
    header = f"{'':32s}" + "".join(f"{r['mode']:>18s}" for r in reports)
    out.append(header)

    def row(label, fn):
        out.append(f"{label:32s}" + "".join(f"{str(fn(r)):>18s}" for r in reports))
    row("screen time % (goal >= 99)", lambda r: r["screen_pct"])
    row("  with control covers %", lambda r: r["screen_pct_with_control_covers"])
    row("  keepable jobs %", lambda r: r["screen_pct_keepable"])
    for group in sorted(first["groups"]):
        row(f"  {group}", lambda r, g=group: f"{r['groups'][g]['screen_pct']} ({r['groups'][g]['tvs']})")
    row("counted samples", lambda r: r["counted"])
    for key in EXCLUSIONS:
        row(f"  excluded {key}", lambda r, k=key: r["excluded"][k])
    row("launches", lambda r: r["launches"])
    row("needless relaunches (goal 0)", lambda r: r["needless_relaunches"])
    row("  no loss before it", lambda r: r["needless_unexplained"])
    row("  2nd LAUNCH < 1 s, same loss", lambda r: r["double_launches"])
    row("LOAD/QUEUE_LOAD sent", lambda r: r["loads"])
    row("app sessions seen", lambda r: r["app_sessions_seen"])
    row("idle closes (device CLOSE)", lambda r: r["idle_closes"])
    row("LAUNCH_ERRORs", lambda r: r["launch_errors"])
    row("daily reboots", lambda r: r["daily_reboots"])
    row("app CLOSE -> LAUNCH p50 ms", lambda r: r["close_to_launch_ms"]["p50"])
    row("app CLOSE -> LAUNCH p99 ms", lambda r: r["close_to_launch_ms"]["p99"])
    row("recovery p50 wall s", lambda r: r["recovery"]["p50_wall_s"])
    row("recovery p99 wall s", lambda r: r["recovery"]["p99_wall_s"])
    row("recovery p50 device s", lambda r: r["recovery"]["p50_device_s"])
    row("recovery p99 device s", lambda r: r["recovery"]["p99_device_s"])
    row("recovery episodes/unrecovered", lambda r: f"{r['recovery']['episodes']}/{r['recovery']['unrecovered']}")
    for key in sorted({k for r in reports for k in r["relaunches_per_device_hour_media_reset"]}):
        row(f"  launches/device-h {key}", lambda r, k=key: r["relaunches_per_device_hour_media_reset"].get(k))
    for r in reports:
        out.append(f"[{r['mode']}] lost samples by cause: {json.dumps(r['lost_samples_by_cause'])}")
        out.append(f"[{r['mode']}] recovery by cause: {json.dumps(r['recovery']['by_cause'])}")
        out.append(f"[{r['mode']}] lost samples by group: {json.dumps(r['lost_samples_by_group'])}")
        out.append(f"[{r['mode']}] longest recoveries (t from t0): {json.dumps(r['longest_recoveries'])}")
        out.append(f"[{r['mode']}] launches explained by: {json.dumps(r['launches_explained_by'])}")
        if r["needless"]:
            out.append(f"[{r['mode']}] needless launches (first): {json.dumps(r['needless'][:10])}")
        if r["double_launches"]:
            out.append(f"[{r['mode']}] double launches (first): {json.dumps(r['double_launch_examples'])}")
        if r["screen_agreement"] is not None:
            out.append(f"[{r['mode']}] castline screen vs truth: {json.dumps(r['screen_agreement'])[:1500]}")
        out.append(f"[{r['mode']}] faults scheduled: {json.dumps(r['faults_scheduled'])}, control commands ok "
                   f"{r['control_commands_ok']}; workdir {r['workdir']}")
        for line in r.get("daemon_warnings", [])[-5:]:
            out.append(f"[{r['mode']}] daemon: {line[:300]}")
    for note in notes:
        out.append(f"note: {note}")
    return "\n".join(out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--naive-worker":
        naive_worker(sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN", "/tmp/fd-bin/castline"))
    parser.add_argument("--tvs", type=int, default=30)
    parser.add_argument("--duration", type=float, default=1440, help="measured wall seconds (after a 20 s warm-up)")
    parser.add_argument("--scale", type=float, default=60, help="--field-time-scale of the simulator (and castline's)")
    parser.add_argument("--seed", type=int, default=47)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--castline", dest="mode", action="store_const", const="castline")
    which.add_argument("--naive", dest="mode", action="store_const", const="naive")
    which.add_argument("--both", dest="mode", action="store_const", const="both")
    which.add_argument("--modes", help="comma-separated days to run, in order: castline, castline+receiver, naive")
    parser.add_argument("--receiver", action="store_true",
                        help="add a castline day whose pages on media-reset profiles use castline's receiver page (the opt-in keep-alive)")
    parser.add_argument("--receiver-app-id", help="the simulator's app id of castline's receiver page when the binary was built "
                                                  "from another tree than this one (default: Sources/CastCore/CastlineReceiver.swift)")
    parser.add_argument("--naive-interval", type=float, default=60, help="device seconds between the naive recaster's casts")
    parser.add_argument("--no-castline-scale", action="store_true", help="do not give castline daemon.field_time_scale")
    parser.add_argument("--real-launch-times", action="store_true",
                        help="keep launch latencies unscaled (the simulator divides them by the scale too)")
    parser.add_argument("--keep", action="store_true", help="keep each day's folder (frame log, daemon log)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    parser.add_argument("--json-out", help="also write the JSON object to this file")
    parser.add_argument("--reanalyse", nargs="+", metavar="DIR", help="analyse again the days kept (--keep) in these folders")
    args = parser.parse_args()
    if args.receiver_app_id:
        os.environ["FIELD_DAY_RECEIVER_APP_ID"] = args.receiver_app_id
    if not 1 <= args.tvs <= 200 or args.duration < 30 or not 1 <= args.scale <= 10000:
        parser.error("--tvs 1..200, --duration >= 30, --scale 1..10000")
    if args.reanalyse:
        reports = []
        for folder in args.reanalyse:
            with open(os.path.join(folder, "day.json")) as f:
                day = json.load(f)
            saved = argparse.Namespace(**day["args"])
            fleet = Fleet(day["fleet"]["tvs"], day["fleet"]["base"], 0, saved.duration, receiver=day["fleet"].get("receiver"))
            fleet.entry_from, fleet.entry_to = day["fleet"]["entry_from"], day["fleet"]["entry_to"]
            report = analyse(saved, day["mode"], fleet, [tuple(x) for x in day["samples"]], [tuple(x) for x in day["frames"]],
                             [tuple(x) for x in day["injected"]], [tuple(x) for x in day["faults"]], day["t0_wall"],
                             day["features"], day["api_screen_seen"])
            report["workdir"] = folder
            reports.append(report)
        notes = ["re-analysed from " + ", ".join(args.reanalyse)]
        summary = {"reports": reports, "notes": notes, "exclusions": EXCLUSIONS}
        print(json.dumps(summary) if args.json else text_report(reports, notes), flush=True)
        return 0
    if args.modes:
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        if not modes or any(m not in ("castline", "castline+receiver", "naive") for m in modes):
            parser.error("--modes takes castline, castline+receiver, naive")
    else:
        modes = {"castline": ["castline"], "naive": ["naive"], "both": ["castline", "naive"], None: ["castline"]}[args.mode]
    if args.receiver and "castline+receiver" not in modes:
        modes.insert(1 if modes[0] == "castline" else 0, "castline+receiver")
    notes = ["HA-dashboard jobs: the config's site jobs show pages through DashCast (or castline's receiver); no "
             "Home Assistant dashboard job exists in the config: none in this day"]
    if args.scale != 1:
        notes.append(f"under --field-time-scale {args.scale:g} a loss's recovery is not compressed: each wall second "
                     f"of it is {args.scale:g} device seconds (screen time of relaunch-heavy profiles is pessimistic)")
    reports = [r for r in (run_day(args, mode, notes) for mode in modes) if r is not None]
    if not reports:
        print(json.dumps({"reports": [], "notes": notes}) if args.json else "\n".join(notes), flush=True)
        return 1
    summary = {"reports": reports, "notes": notes, "exclusions": EXCLUSIONS,
               "goals": {"screen_pct_ge_99": reports[0]["screen_pct"] is not None and reports[0]["screen_pct"] >= 99,
                         "needless_relaunches_0": reports[0]["needless_relaunches"] == 0}}
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(summary, f, indent=1)
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        print(text_report(reports, notes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
