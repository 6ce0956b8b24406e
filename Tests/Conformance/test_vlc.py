"""VLC 3.0 (Debian's vlc-bin + vlc-plugin-base, run as an unprivileged user) casts a short local
file to `castline sim`; the frame log must show its device-auth challenge, LAUNCH and LOAD."""
import os
import wave

import pytest

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")


def test_vlc_casts_a_local_file(netns, sim, workdir):
    tone = os.path.join(workdir, "tone.wav")
    with wave.open(tone, "wb") as w:
        w.setparams((1, 2, 44100, 0, "NONE", "NONE"))
        w.writeframes(bytes(88200))          # one second of silence
    os.chmod(tone, 0o644)
    home = os.path.join(workdir, "vlchome")
    os.makedirs(home)
    os.chown(home, 65534, 65534)
    result = netns.run("env", f"HOME={home}", "cvlc", "--no-dbus", tone, "--sout",
                       "#chromecast{ip=127.0.0.1,port=8009}", "--play-and-exit", "--run-time=8",
                       user="nobody", timeout=60)
    frames = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "in"]
    from_vlc = [f for f in frames if f["source"].startswith("sender-vlc")]
    kinds = [(f["namespace"].rsplit(".", 1)[-1], f.get("type")) for f in from_vlc]
    assert ("deviceauth", "challenge") in kinds, (kinds, result.stderr[-3000:])
    assert ("receiver", "LAUNCH") in kinds, (kinds, result.stderr[-3000:])
    assert ("media", "LOAD") in kinds, (kinds, result.stderr[-3000:])
    answers = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "out"
               and f["namespace"].endswith("deviceauth")]
    assert answers and answers[0]["type"] == "response", answers
