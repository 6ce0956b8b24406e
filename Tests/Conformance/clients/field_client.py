"""Unmodified pychromecast against a simulated device with a field profile. Prints one JSON line.

Usage:
  field_client.py HOST PORT UUID launch APP_ID TIMEOUT [force]
      start_app(APP_ID, timeout=TIMEOUT): {"result": "ok"|"failed"|"timeout", "elapsed", "app_id"};
      `force`: force_launch (pychromecast sends no LAUNCH for the app that already runs without it)
  field_client.py HOST PORT UUID keepalive SECONDS INTERVAL URL
      DashCast shows URL (forced), then the same page again every INTERVAL s for SECONDS s:
      {"closed_after": seconds from the launch to the app's close, or null, "app_id": at the end}
  field_client.py HOST PORT UUID watch SECONDS
      launches the Default Media Receiver, prints {"event": "launched"} at once, then records
      every change of (app_id, is_active_input, is_stand_by) for SECONDS s: {"changes": [...]}
  field_client.py HOST PORT UUID play URL DURATION_HINT SECONDS
      play_media(URL, BUFFERED, media_info {"duration": DURATION_HINT}) and waits up to SECONDS s
      for its end: {"states": [[player_state, idle_reason], ...] as the listener saw them,
      "duration": the status's duration while playing, "finished_after": seconds from PLAYING
      to IDLE/FINISHED, or null}
  field_client.py HOST PORT UUID flow
      pychromecast_flow.py's steps (play, pause, seek, volume) without its quit_app: the device's
      CLOSE on STOP sets off pychromecast's own two-thread write race (pychromecast#1030), which
      fails that step on any profile (and on main) under load. {"playing", "paused", "seek",
      "volume", "app_id"}
Every wait is bounded."""
import json
import sys
import time
import uuid

import pychromecast
from pychromecast.controllers.dashcast import DashCastController
from pychromecast.error import RequestFailed, RequestTimeout

from polling import poll

host, port, device_uuid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cast = pychromecast.get_chromecast_from_host((host, port, uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)


def app_id():
    return cast.status.app_id if cast.status else None


if mode == "launch":
    wanted, timeout = sys.argv[5], float(sys.argv[6])
    started = time.monotonic()
    try:
        cast.start_app(wanted, force_launch=sys.argv[7:8] == ["force"], timeout=timeout)
        result = "ok"
    except RequestFailed:
        result = "failed"
    except RequestTimeout:
        result = "timeout"
    print(json.dumps({"result": result, "elapsed": time.monotonic() - started, "app_id": app_id()}), flush=True)
elif mode == "keepalive":
    seconds, interval, url = float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
    controller = DashCastController()
    cast.register_handler(controller)
    controller.load_url(url, force=True)
    poll(lambda: app_id() == "84912283", 20)
    launched = time.monotonic()
    closed_after = None
    next_send = launched + interval
    while time.monotonic() - launched < seconds:
        if app_id() != "84912283":
            closed_after = time.monotonic() - launched
            break
        if time.monotonic() >= next_send:
            # The same page again: a message to the app, no media.
            controller.load_url(url, force=True)
            next_send += interval
        time.sleep(0.05)
    print(json.dumps({"closed_after": closed_after, "app_id": app_id()}), flush=True)
elif mode == "watch":
    seconds = float(sys.argv[5])
    cast.start_app("CC1AD845", timeout=15)
    print(json.dumps({"event": "launched"}), flush=True)
    changes, last = [], None
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        status = cast.status
        seen = (status.app_id, status.is_active_input, status.is_stand_by) if status else None
        if seen != last:
            changes.append({"t": round(time.monotonic() - started, 2), "app_id": seen and seen[0],
                            "is_active_input": seen and seen[1], "is_stand_by": seen and seen[2]})
            last = seen
        time.sleep(0.05)
    print(json.dumps({"changes": changes}), flush=True)
elif mode == "flow":
    media = cast.media_controller
    media.play_media("http://media.invalid/castline/big-buck-bunny.mp4", "video/mp4", title="Big Buck Bunny",
                     stream_type="BUFFERED", media_info={"duration": 600})
    media.block_until_active(timeout=20)
    seen = {"playing": bool(poll(lambda: media.status.player_state == "PLAYING", 15))}
    media.pause()
    seen["paused"] = bool(poll(lambda: media.status.player_state == "PAUSED", 10))
    media.seek(42.5)
    seen["seek"] = bool(poll(lambda: abs((media.status.current_time or 0) - 42.5) < 0.01, 10))
    cast.set_volume(0.35)
    seen["volume"] = bool(poll(lambda: cast.status is not None and abs(cast.status.volume_level - 0.35) < 1e-6, 10))
    seen["app_id"] = app_id()
    print(json.dumps(seen), flush=True)
elif mode == "play":
    url, hint, seconds = sys.argv[5], float(sys.argv[6]), float(sys.argv[7])
    media = cast.media_controller
    states, marks = [], {}

    class Listener:
        def new_media_status(self, status):
            states.append([status.player_state, status.idle_reason])
            if status.player_state == "PLAYING" and "playing" not in marks:
                marks["playing"] = time.monotonic()
                marks["duration"] = status.duration
            if status.player_state == "IDLE" and status.idle_reason == "FINISHED" and "finished" not in marks:
                marks["finished"] = time.monotonic()

        def load_media_failed(self, queue_item_id, error_code):
            states.append(["LOAD_FAILED", error_code])

    media.register_status_listener(Listener())
    media.play_media(url, "video/mp4", stream_type="BUFFERED", media_info={"duration": hint})
    poll(lambda: "finished" in marks, seconds)
    finished_after = marks["finished"] - marks["playing"] if "finished" in marks and "playing" in marks else None
    print(json.dumps({"states": states, "duration": marks.get("duration"), "finished_after": finished_after}), flush=True)
cast.disconnect(timeout=5)
