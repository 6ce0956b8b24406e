"""Local media that just plays (issue 29): castline probes a file's streams with libavformat, picks
the device's row of the capability table, and plays it as is, remuxes it, transcodes it with an
ffmpeg child, or refuses it with the reason. `castline sim` judges the media as the simulated
model would (ffprobe on the bytes it fetched) and reports videoInfo from the real streams.

All media is made here with ffmpeg (lavfi testsrc2/sine, a few seconds), never committed."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import Simulator, castline_binary, wait_until
from hub import Hub

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

DEVICE = "127.0.0.1"


def ffmpeg(*argv):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *argv], check=True, timeout=120)


HDR10_X265 = ("log-level=error:hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:"
              "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400")


@pytest.fixture(scope="module")
def media():
    """The issue's test media, made once for the module (about 10 s on two cores)."""
    folder = tempfile.mkdtemp(prefix="castline-media-")
    os.chmod(folder, 0o755)
    paths = {name: os.path.join(folder, name) for name in
             ["h264.mp4", "hdr10.mkv", "vp9.webm", "tone.flac", "long444.mp4", "movie.srt"]}
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
           "-c:v", "libx264", "-preset", "ultrafast", "-crf", "35", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
           "-movflags", "+faststart", paths["h264.mp4"])
    # 4K HEVC Main 10 with HDR10 metadata (PQ, BT.2020, mastering display), tiny: 1 s at 5 fps.
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=3840x2160:rate=5:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
           "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le", "-x265-params", HDR10_X265,
           "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-c:a", "aac", "-shortest",
           paths["hdr10.mkv"])
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
           "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libopus", "-shortest",
           paths["vp9.webm"])
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a", "flac", paths["tone.flac"])
    # H.264 High 4:4:4 (no Cast device decodes it), 60 s: a transcode that runs for several seconds.
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=60", "-f", "lavfi", "-i", "sine=duration=60",
           "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv444p", "-c:a", "aac", "-shortest", paths["long444.mp4"])
    with open(paths["movie.srt"], "w") as f:
        f.write("1\n00:00:00,500 --> 00:00:01,500\nHello <i>there</i>\n\n2\n00:00:01,600 --> 00:00:02,000\nBye\n")
    # The same H.264 in MKV with the SRT embedded as a French text track: a remux with subtitles.
    paths["subbed.mkv"] = os.path.join(folder, "subbed.mkv")
    ffmpeg("-i", paths["h264.mp4"], "-i", paths["movie.srt"], "-map", "0", "-map", "1", "-c", "copy", "-c:s", "srt",
           "-metadata:s:s:0", "language=fra", "-metadata:s:s:0", "title=Français", paths["subbed.mkv"])
    yield paths
    shutil.rmtree(folder, ignore_errors=True)


def probe(path):
    result = subprocess.run([castline_binary(), "probe", path, "--json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_probe_reads_streams_from_the_container(media):
    h264 = probe(media["h264.mp4"])
    assert h264["contentType"] == "video/mp4" and h264["videoInfo"] == {"width": 1920, "height": 1080, "hdrType": "sdr"}, h264
    kinds = [(s["kind"], s["codec"]) for s in h264["streams"]]
    assert kinds == [("video", "h264"), ("audio", "aac")], kinds
    assert h264["streams"][0]["frame_rate"] == 30 and h264["streams"][0]["bit_depth"] == 8, h264["streams"][0]

    hdr = probe(media["hdr10.mkv"])
    video = hdr["streams"][0]
    assert (video["codec"], video["profile"], video["bit_depth"], video["transfer"], video["hdr_format"]) == \
        ("hevc", "Main 10", 10, "smpte2084", "HDR10"), video
    assert hdr["videoInfo"] == {"width": 3840, "height": 2160, "hdrType": "hdr"}, hdr
    assert hdr["container"].startswith("matroska"), hdr

    vp9 = probe(media["vp9.webm"])
    assert vp9["contentType"] == "video/webm" and [s["codec"] for s in vp9["streams"]] == ["vp9", "opus"], vp9

    flac = probe(media["tone.flac"])
    assert flac["contentType"] == "audio/flac" and "videoInfo" not in flac, flac
    assert [(s["kind"], s["codec"]) for s in flac["streams"]] == [("audio", "flac")], flac


def test_probe_with_a_model_prints_the_decision(media):
    def decision(path, model):
        result = subprocess.run([castline_binary(), "probe", path, "--json", "--model", model], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["plan"]
    assert decision(media["hdr10.mkv"], "Chromecast Ultra")["action"] == "remux"
    to_1080 = decision(media["hdr10.mkv"], "Chromecast")
    assert to_1080["action"] == "transcode" and to_1080["targetHeight"] == 1080 and to_1080["transcodeVideo"], to_1080
    speaker = decision(media["hdr10.mkv"], "Google Nest Mini")
    assert speaker["action"] == "refuse" and "audio only" in speaker["reasons"][0], speaker
    assert decision(media["h264.mp4"], "Chromecast")["action"] == "direct"
    assert decision(media["tone.flac"], "Google Nest Mini")["action"] == "direct"


def model_sim(netns, workdir, model):
    return Simulator(netns, workdir, extra=["--no-mdns", "--model", model])


def ffmpeg_pids(netns):
    found = []
    for pid in netns.pids():
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "ffmpeg":
                    found.append(int(pid))
        except FileNotFoundError:
            continue
    return found


def castline_pid(netns):
    """The casting castline (not the simulator): the namespace's castline process that is not `sim`."""
    for pid in netns.pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except FileNotFoundError:
            continue
        if argv and argv[0].endswith(b"castline") and b"cast" in argv[1:2]:
            return int(pid)
    raise AssertionError("no casting castline in the namespace")


def owner_of(folder):
    try:
        with open(os.path.join(folder, "owner")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def gone_or_zombie(pid):
    """Killed: no process, or one only its (new) parent has yet to reap."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def start_cast(netns, path, *extra):
    """`castline cast FILE --json` (this process serves the file, so it runs until stopped);
    returns the process and its first line (the device once PLAYING)."""
    # --direct: this process casts itself; a hub some other test left on the default socket is never asked.
    process = subprocess.Popen(netns.command(castline_binary(), "cast", path, "--device", DEVICE, "--json", "--direct", *extra),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if not line:
        _, err = process.communicate(timeout=20)
        raise AssertionError(f"cast ended without output (rc {process.returncode}): {err[-3000:]}")
    return process, json.loads(line)


def stop_cast(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate(timeout=5)


def checked(sim):
    return [f for f in sim.frames() if f["event"] == "mediaChecked"]


def status_video_infos(sim):
    out = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "out" and f.get("type") == "MEDIA_STATUS"]
    return [s.get("videoInfo") for f in out for s in f["payload"]["status"] if s.get("playerState") == "PLAYING"]


def test_4k_hdr10_mkv_plays_on_a_4k_hdr_model_after_a_remux(netns, workdir, media):
    sim = model_sim(netns, workdir, "Chromecast Ultra")
    try:
        process, started = start_cast(netns, media["hdr10.mkv"])
        try:
            assert started["state"] == "PLAYING", started
            assert started["served"] == "hdr10.mkv", started
            assert started["transcode"]["action"] == "remux", started
            check = wait_until(lambda: checked(sim), 10, "the simulator's media check")[-1]
            assert check["result"] == "ok" and "hevc Main 10 3840x2160" in check["reason"], check
            # The badge comes from the file's streams (the URL says nothing of 4K or HDR).
            assert check["videoInfo"] == {"width": 3840, "height": 2160, "hdrType": "hdr"}, check
            assert {"width": 3840, "height": 2160, "hdrType": "hdr"} in status_video_infos(sim)
        finally:
            stop_cast(process)
    finally:
        sim.stop()
    assert not ffmpeg_pids(netns), "the remux's ffmpeg ends with the cast"


def test_the_same_file_is_transcoded_to_h264_1080p_for_a_1080p_model(netns, workdir, media):
    sim = model_sim(netns, workdir, "Chromecast")
    try:
        dry = netns.run(castline_binary(), "cast", media["hdr10.mkv"], "--device", DEVICE, "--dry-run", "--json", "--direct", timeout=60)
        assert dry.returncode == 0, dry.stderr
        plan = json.loads(dry.stdout)["plan"]
        assert plan["action"] == "transcode" and plan["targetHeight"] == 1080, plan
        assert not checked(sim), "a dry run loads nothing"
        process, started = start_cast(netns, media["hdr10.mkv"])
        try:
            assert started["state"] == "PLAYING" and started["transcode"]["action"] == "transcode", started
            check = wait_until(lambda: checked(sim), 10, "the simulator's media check")[-1]
            assert check["result"] == "ok" and "h264" in check["reason"], check
            assert check["videoInfo"] == {"width": 1920, "height": 1080, "hdrType": "sdr"}, check
        finally:
            stop_cast(process)
    finally:
        sim.stop()


def test_video_to_a_speaker_is_refused_with_the_reason(netns, workdir, media):
    sim = model_sim(netns, workdir, "Google Nest Mini")
    try:
        result = netns.run(castline_binary(), "cast", media["hdr10.mkv"], "--device", DEVICE, "--direct", timeout=60)
        assert result.returncode == 4, result.stderr
        assert "audio only" in result.stderr and "hevc 3840x2160" in result.stderr, result.stderr
        loads = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "in" and f.get("type") == "LOAD"]
        assert not loads, "nothing is loaded"
        assert not ffmpeg_pids(netns)
        audio = netns.run(castline_binary(), "cast", media["tone.flac"], "--device", DEVICE, "--dry-run", "--direct", timeout=60)
        assert audio.returncode == 0 and "direct" in audio.stdout, audio.stdout + audio.stderr
    finally:
        sim.stop()


def test_h264_mp4_plays_as_is_with_no_ffmpeg(netns, workdir, media):
    sim = model_sim(netns, workdir, "Chromecast")
    try:
        process, started = start_cast(netns, media["h264.mp4"])
        try:
            assert started["state"] == "PLAYING" and started["served"] == "h264.mp4", started
            assert "transcode" not in started, started
            assert not ffmpeg_pids(netns), "no ffmpeg for media the device plays as is"
            check = wait_until(lambda: checked(sim), 10, "the simulator's media check")[-1]
            assert check["videoInfo"] == {"width": 1920, "height": 1080, "hdrType": "sdr"}, check
        finally:
            stop_cast(process)
    finally:
        sim.stop()


def test_sigkill_of_castline_while_transcoding_leaves_no_ffmpeg(netns, workdir, media):
    sim = model_sim(netns, workdir, "Chromecast")
    try:
        process, started = start_cast(netns, media["long444.mp4"])
        assert started["transcode"]["action"] == "transcode", started
        process_pid = castline_pid(netns)
        running = ffmpeg_pids(netns)
        assert running, "ffmpeg still transcodes when castline is killed (the test means something)"
        process.kill()
        process.wait(timeout=10)
        wait_until(lambda: not ffmpeg_pids(netns), 5, "ffmpeg to die with castline")
        for pid in running:
            assert gone_or_zombie(pid), pid
        # The killed castline could not remove its folder; the next transcode does.
        left = [d for d in glob.glob("/tmp/castline-transcode-*") if owner_of(d) == process_pid]
        assert left, "the SIGKILLed castline's folder is there until someone sweeps it"
        again, _ = start_cast(netns, media["long444.mp4"])
        stop_cast(again)
        assert not any(os.path.exists(d) for d in left), left
    finally:
        sim.stop()


def test_a_seek_during_a_transcode_lands_within_two_seconds(netns, workdir, media):
    # Through the hub: the cast and the seek meet in one control plane, which holds the seek
    # until ffmpeg has written past the target.
    sim = model_sim(netns, workdir, "Chromecast")
    hub = Hub(netns, sim, workdir)
    try:
        uuid = sim.ready["devices"][0]["uuid"]
        status, body, _ = hub.post(f"/v1/devices/{uuid}/cast", {"media": media["long444.mp4"]})
        assert status == 200 and body["transcode"]["action"] == "transcode", body
        written = body["transcode"]["position"]
        target = 40.0
        assert written < target, f"the target lies beyond what ffmpeg had written ({written} s)"
        status, body, _ = hub.post(f"/v1/devices/{uuid}/seek", {"position": target})
        assert status == 200, body
        assert body["transcode"]["position"] >= target, body["transcode"]
        position = body["currentTime"]
        assert abs(position - target) <= 2, position
        # The progress shows in `status` too: what ffmpeg has written next to the device's position.
        shown = netns.run(castline_binary(), "status", "--device", uuid, "--api-socket", hub.socket, timeout=30)
        assert shown.returncode == 0 and "/ 01:00" in shown.stdout, shown.stdout
        assert " transcoded (running)" in shown.stdout or " transcoded (finished)" in shown.stdout, shown.stdout
        status, body, _ = hub.post(f"/v1/devices/{uuid}/stop", {})
        assert status == 200, body
        wait_until(lambda: not ffmpeg_pids(netns), 10, "ffmpeg to stop with the cast")
    finally:
        hub.stop()
        sim.stop()


def test_srt_is_an_active_webvtt_track_the_simulator_fetched_with_cors(netns, workdir, media):
    folder = os.path.dirname(media["h264.mp4"])
    shutil.copy(media["movie.srt"], os.path.join(folder, "h264.en.srt"))
    sim = model_sim(netns, workdir, "Chromecast")
    try:
        process, started = start_cast(netns, media["h264.mp4"], "--subtitles", "auto")
        try:
            assert started["state"] == "PLAYING", started
            check = wait_until(lambda: checked(sim), 10, "the simulator's media check")[-1]
            assert check["result"] == "ok", check
            track = check["textTracks"][0]
            assert track["status"] in (200, 206) and track["cors"] == "*" and track["webvtt"], track
            loads = [f["payload"] for f in sim.frames() if f["event"] == "frame" and f["direction"] == "in" and f.get("type") == "LOAD"]
            sent = loads[-1]["media"]["tracks"][0]
            assert (sent["type"], sent["subtype"], sent["trackContentType"], sent["language"], sent["name"]) == \
                ("TEXT", "SUBTITLES", "text/vtt", "en", "English"), sent
            assert sent["trackContentId"] == track["url"] and loads[-1]["activeTrackIds"] == [sent["trackId"]], loads[-1]
            statuses = [s for f in sim.frames() if f["event"] == "frame" and f["direction"] == "out" and f.get("type") == "MEDIA_STATUS"
                        for s in f["payload"]["status"] if s.get("playerState") == "PLAYING"]
            assert statuses and statuses[-1].get("activeTrackIds") == [sent["trackId"]], statuses[-1:]
        finally:
            stop_cast(process)
    finally:
        sim.stop()
        os.unlink(os.path.join(folder, "h264.en.srt"))


def test_an_embedded_text_track_becomes_webvtt_beside_a_remux(netns, workdir, media):
    sim = model_sim(netns, workdir, "Chromecast")
    try:
        process, started = start_cast(netns, media["subbed.mkv"], "--subtitles", "auto")
        try:
            assert started["state"] == "PLAYING" and started["transcode"]["action"] == "remux", started
            check = wait_until(lambda: checked(sim), 10, "the simulator's media check")[-1]
            assert check["result"] == "ok", check
            assert check["textTracks"][0]["webvtt"] and check["textTracks"][0]["cors"] == "*", check
            loads = [f["payload"] for f in sim.frames() if f["event"] == "frame" and f["direction"] == "in" and f.get("type") == "LOAD"]
            sent = loads[-1]["media"]["tracks"][0]
            assert (sent["language"], sent["name"], sent["trackContentType"]) == ("fra", "Français", "text/vtt"), sent
        finally:
            stop_cast(process)
    finally:
        sim.stop()


def test_a_urls_streams_come_from_a_range_read_of_its_head(netns, workdir, media):
    folder = os.path.dirname(media["hdr10.mkv"])
    server = subprocess.Popen(netns.command(sys.executable, "-m", "http.server", "8098", "--bind", "127.0.0.1", "--directory", folder),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sim = model_sim(netns, workdir, "Google Nest Mini")
    try:
        probe_ok = "import socket; socket.create_connection(('127.0.0.1', 8098), 1).close()"
        wait_until(lambda: netns.run(sys.executable, "-c", probe_ok).returncode == 0, 10, "the HTTP server")
        url = "http://127.0.0.1:8098/hdr10.mkv"
        shown = netns.run(castline_binary(), "probe", url, "--json", "--model", "Chromecast Ultra", timeout=60)
        assert shown.returncode == 0, shown.stderr
        report = json.loads(shown.stdout)
        assert report["videoInfo"] == {"width": 3840, "height": 2160, "hdrType": "hdr"} and report["plan"]["action"] == "remux", report
        refused = netns.run(castline_binary(), "cast", url, "--device", DEVICE, "--direct", timeout=60)
        assert refused.returncode == 4 and "audio only" in refused.stderr, refused.stderr
        loads = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "in" and f.get("type") == "LOAD"]
        assert not loads, "a URL whose head shows video is refused before any LOAD to a speaker"
    finally:
        sim.stop()
        server.kill()
        server.wait(timeout=5)
