"""The field day's short version (Benchmarks/field-day.py, issue 47): 30 simulated TVs of mixed
field profiles at 60x (150 s measured: 2.5 device-hours), one castline job per TV (DashCast
pages, playlists, one long media, schedules, audio on speakers), with seeded covers, standby,
input switches and hung launches on top of the profiles' own idle closes, ambient covers,
CANCELLED launches and daily reboots. One run (about 4 minutes), several goals:

- the day ran as scripted (every sample taken, every fault injected, the profiles' behaviours
  happened);
- no needless relaunch: every LAUNCH castline sent follows a loss, and one loss gets one LAUNCH
  (goal 0);
- the jobs castline can keep on screen by itself (all but DashCast pages on the profiles whose
  idle timer only media resets) are on screen >= 99 % of the counted samples;
- the whole fleet >= 99 %: with castline's receiver page for those pages when the binary has it
  (site.receiver: castline); without it an expected failure that names the figures (no sender
  keeps DashCast there: it is relaunched after every close, and each relaunch costs seconds);
- castline's `screen.visible`, where it says true or false, agrees with the simulator's truth
  >= 99 % outside 2 s of a change, and is null only where the device has no CEC fields (or in the
  5 s after a reboot, before castline has heard the device again); skipped
  while `GET /v1/devices` has no `screen` field.
The full day (24 minutes, and the naive recaster side by side): `Benchmarks/field-day.py --both`.
Exclusions and definitions: the benchmark's docstring and its EXCLUSIONS."""
import importlib.util
import json
import os
import subprocess
import tempfile

import pytest

from conftest import PYTHON, REPO, castline_binary

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

TVS, DURATION, SCALE, SEED = 30, 150, 60, 47
BENCHMARK = os.path.join(REPO, "Benchmarks", "field-day.py")


def receiver_supported():
    """Whether this castline takes castline's receiver page for site jobs (the benchmark's probe)."""
    spec = importlib.util.spec_from_file_location("field_day", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with tempfile.TemporaryDirectory() as folder:
        features, _ = module.probe_features(folder, SCALE, True)
    return bool(features.get("castline_receiver"))


@pytest.fixture(scope="module")
def day():
    mode = "castline+receiver" if receiver_supported() else "castline"
    result = subprocess.run([PYTHON, BENCHMARK, "--bin", castline_binary(), "--tvs", str(TVS), "--duration", str(DURATION),
                             "--scale", str(SCALE), "--seed", str(SEED), "--modes", mode, "--json"],
                            capture_output=True, text=True, timeout=290)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0 and lines, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(lines[-1])
    report = summary["reports"][0]
    print(json.dumps({k: report[k] for k in ("mode", "screen_pct", "screen_pct_keepable", "needless_relaunches", "launches",
                                             "recovery", "lost_samples_by_cause", "excluded", "features")}))
    return report


def brief(report, *keys):
    return json.dumps({k: report[k] for k in keys})[:4000]


def test_the_day_ran_as_scripted(day):
    # One sample a second for every TV (a sample may be late under load: 90 %).
    assert day["samples"] >= (DURATION + 20) * TVS * 0.9, day["samples"]
    done, total = (int(x) for x in day["control_commands_ok"].split("/"))
    assert total > 0 and done == total, day["control_commands_ok"]
    scheduled = day["faults_scheduled"]
    assert all(scheduled[k] >= 1 for k in ("cover", "standby", "input", "launch-hang")), scheduled
    assert day["idle_closes"] > 0, "the profiles closed idle apps"
    assert day["daily_reboots"] >= 1, "the chromecasts' daily reboot came within the run"
    assert day["counted"] > 0.8 * day["samples"] * DURATION / (DURATION + 20), brief(day, "excluded", "counted")


def test_no_launch_that_no_loss_explains(day):
    assert day["needless_relaunches"] == 0, brief(day, "needless", "double_launch_examples", "launches_explained_by")


def test_the_jobs_castline_can_keep_stay_on_screen(day):
    assert day["screen_pct_keepable"] >= 99.0, brief(day, "screen_pct_keepable", "groups", "lost_samples_by_group",
                                                     "longest_recoveries")


def test_screen_time_of_the_fleet(day):
    if day["screen_pct"] >= 99.0:
        return
    detail = brief(day, "screen_pct", "groups", "lost_samples_by_cause", "relaunches_per_device_hour_media_reset")
    if day["mode"] == "castline":
        pytest.xfail(f"screen time {day['screen_pct']} % < 99 % with DashCast on the profiles that only media keeps "
                     f"alive; this castline has no receiver page of its own (site.receiver: castline): {detail}")
    pytest.fail(f"screen time {day['screen_pct']} % < 99 %: {detail}")


def test_castline_says_what_the_screen_shows(day):
    """Where castline says visible true or false, it is right >= 99 % of the samples outside 2 s of
    a change (control-socket covers, which no device reports, apart); null ("the device does not
    say") is not agreement: `agree_pct` counts it against castline, `null_by_profile` says where,
    and it is allowed only on profiles without HDMI-CEC fields (a chromecast reports them)."""
    agreement = day["screen_agreement"]
    if not isinstance(agreement, dict):
        pytest.skip(f"castline's screen state: {agreement}")
    print(json.dumps({k: v for k, v in agreement.items() if k != "examples"}))
    assert agreement["judged"] > 0, agreement
    assert agreement["agree_pct_when_known"] is not None and agreement["agree_pct_when_known"] >= 99.0, json.dumps(agreement)[:4000]
    assert not agreement["null_by_profile"].get("chromecast"), json.dumps(agreement)[:4000]
