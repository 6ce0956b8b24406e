"""`make demo`'s script (scripts/demo.sh) inside a network namespace: reaches PLAYING, shows the
status view, stops everything it started and exits 0."""
import os

import pytest

from conftest import REPO, castline_binary

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")


def test_the_demo_script_reaches_playing_and_exits_cleanly(netns):
    env = dict(os.environ, CASTLINE_BIN=castline_binary(), DEMO_SECONDS="2")
    result = netns.run("bash", os.path.join(REPO, "scripts", "demo.sh"), timeout=120, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert 'Demo Living Room TV: PLAYING "castline demo trailer"' in out and "[4K HDR]" in out, out
    assert "HTTP 206" in out, "the simulated device fetched the sample with a Range request"
    assert "demo done: the cast reached PLAYING." in out
    leftover = [pid for pid in os.popen(f"ip netns pids {netns.name}").read().split()]
    assert leftover == [], f"the demo left processes running: {leftover}"
