"""`castline status --follow` in a real terminal (tmux): the live view shows the title, state,
4K/HDR badge, volume and a progress bar that advances between two captures."""
import os
import re
import subprocess

import pytest

from clients.polling import poll
from conftest import REPO, Simulator, castline_binary

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")


def test_status_follow_redraws_a_live_view_in_a_terminal(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", os.path.join(REPO, "configs", "sim.json")])
    server = f"castline-{os.getpid()}"
    tmux = ["tmux", "-L", server]
    try:
        url = "http://media.invalid/trailer-2160p.mp4"
        cast = netns.run(castline_binary(), "cast", url, "--device", "127.0.0.1", "--title", "Trailer")
        assert cast.returncode == 0, cast.stderr
        command = " ".join(netns.command(castline_binary(), "status", "--follow", "--device", "127.0.0.1"))
        subprocess.run([*tmux, "new-session", "-d", "-s", "view", "-x", "90", "-y", "12", command], check=True)

        def capture():
            return subprocess.run([*tmux, "capture-pane", "-p", "-t", "view"], capture_output=True, text=True,
                                  check=True).stdout

        def screen_where(condition):
            """The first capture (one every 0.2 s, for at most 15 s) on which `condition` holds, else the last."""
            def attempt():
                screen = capture()
                return screen if condition(screen) else None
            return poll(attempt, 15, interval=0.2) or capture()

        def clock(screen):
            match = re.search(r"\] (\d\d):(\d\d) / 02:00", screen)
            return int(match.group(1)) * 60 + int(match.group(2)) if match else None

        def elapsed(screen):
            assert clock(screen) is not None, screen
            return clock(screen)

        first = screen_where(lambda screen: "PLAYING" in screen)
        assert "Trailer" in first and "▶ PLAYING" in first and "[4K HDR]" in first, first
        assert "volume 100%" in first, first
        # The view redraws as playback goes on: a capture showing at least 2 s more of the media.
        start = elapsed(first)
        second = screen_where(lambda screen: (clock(screen) or 0) >= start + 2)
        assert elapsed(second) >= elapsed(first) + 2, (first, second)
        assert second.count("#") >= first.count("#"), (first, second)
        assert len([line for line in second.splitlines() if "PLAYING" in line]) == 1, "redrawn in place, not appended"
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        assert sim.stop() == 0
