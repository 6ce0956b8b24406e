"""What pychromecast 14 sees of a device, for the record-and-replay test, as one JSON line.
Usage: pychromecast_replay.py HOST PORT UUID drive|play|pause|observe SECONDS
drive: launch the Default Media Receiver, load a clip, wait for PLAYING, pause, wait for PAUSED.
play: only the first half (up to PLAYING); pause: join what plays, pause it, wait for PAUSED.
observe: only connect and listen (what a replayed device sends on its own) for SECONDS.
Both report the player states in the order seen (repeats folded), the content ids and app ids."""
import json
import sys
import time
import uuid

import pychromecast

from polling import poll

host, port, device_uuid, mode, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
CLIP = "http://media.invalid/castline/replay.mp4"
states, content_ids, app_ids = [], [], []


class Listener:
    def new_media_status(self, status):
        if status.player_state and (not states or states[-1] != status.player_state):
            states.append(status.player_state)
        if status.content_id and status.content_id not in content_ids:
            content_ids.append(status.content_id)

    def load_media_failed(self, queue_item_id, error_code):
        states.append(f"LOAD_FAILED:{error_code}")


class StatusListener:
    def new_cast_status(self, status):
        if status.app_id and status.app_id not in app_ids:
            app_ids.append(status.app_id)


cast = pychromecast.get_chromecast_from_host(
    (host, port, uuid.UUID(device_uuid), "Chromecast", "castline sim"), tries=1, retry_wait=1, timeout=10)
cast.register_status_listener(StatusListener())
cast.media_controller.register_status_listener(Listener())
cast.wait(timeout=15)
observed = {"friendly_name": cast.cast_info.friendly_name}
mc = cast.media_controller
if mode in ("drive", "play"):
    mc.play_media(CLIP, "video/mp4", title="Replay")
    mc.block_until_active(timeout=15)
    observed["reached_playing"] = bool(poll(lambda: mc.status.player_state == "PLAYING", 15))
if mode in ("drive", "pause"):
    if mode == "pause":
        observed["joined_playing"] = bool(poll(lambda: mc.status.player_state == "PLAYING", 15))
    mc.pause()
    observed["reached_paused"] = bool(poll(lambda: mc.status.player_state == "PAUSED", 15))
if mode == "observe":
    poll(lambda: "PAUSED" in states, seconds)
else:
    time.sleep(0.5)   # the last status reaches every listener (and the capture) before we leave
observed.update(states=states, content_ids=content_ids, app_ids=app_ids)
cast.disconnect(timeout=5)
print(json.dumps(observed), flush=True)
