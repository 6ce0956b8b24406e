"""Another sender, as a person with a phone: pychromecast's play_media (LAUNCH of the Default
Media Receiver, LOAD), then it watches its media for HOLD seconds and reports whether anything
took the screen from it. The app and the media are left running.
Usage: pychromecast_visitor.py HOST PORT UUID URL HOLD_SECONDS
Prints {"played": bool, "kept": bool, "lost": "<what replaced it>" | null, "states": [...]}."""
import json
import sys
import time
import uuid

import pychromecast

from polling import poll

host, port, device_uuid, url, hold = sys.argv[1:6]
cast = pychromecast.get_chromecast_from_host((host, int(port), uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
media = cast.media_controller
states = []


class Listener:
    def new_media_status(self, status):
        states.append([status.player_state, status.idle_reason, status.content_id])

    def load_media_failed(self, queue_item_id, error_code):
        states.append(["LOAD_FAILED", error_code, None])


media.register_status_listener(Listener())
media.play_media(url, "video/mp4", title="Visitor")
played = poll(lambda: media.status.player_state == "PLAYING" and media.status.content_id == url, 15) is not None
lost = None
if played:
    deadline = time.monotonic() + float(hold)
    while time.monotonic() < deadline and lost is None:
        status = media.status
        app = cast.app_id
        if app != pychromecast.config.APP_MEDIA_RECEIVER:
            lost = f"app {app}"
        elif status.content_id != url or status.player_state not in ("PLAYING", "BUFFERING"):
            lost = f"{status.player_state} {status.idle_reason} {status.content_id}"
        time.sleep(0.05)   # the watch's sampling interval, bounded by `hold`
cast.disconnect(timeout=5)
print(json.dumps({"played": played, "kept": played and lost is None, "lost": lost, "states": states}), flush=True)
sys.exit(0)
