"""pychromecast 14 (unmodified) LOADs media the device cannot play and prints, as one JSON line,
the media status it ends with. Usage: pychromecast_load_failure.py HOST PORT UUID URL"""
import json
import sys
import uuid

import pychromecast

from polling import poll

host, port, device_uuid, url = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cast = pychromecast.get_chromecast_from_host(
    (host, port, uuid.UUID(device_uuid), "Chromecast", "castline sim"), tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
mc = cast.media_controller
mc.play_media(url, "video/mp4", title="Unplayable")
reached = bool(poll(lambda: mc.status.idle_reason is not None, 15))
print(json.dumps({"reached_idle": reached, "player_state": mc.status.player_state, "idle_reason": mc.status.idle_reason}))
cast.disconnect(timeout=5)
