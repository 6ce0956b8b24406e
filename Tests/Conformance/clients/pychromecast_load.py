"""Casts one media with pychromecast's play_media (LAUNCH of the Default Media Receiver, then
LOAD) and waits until it plays; the app is left running. Used by the Swift test that compares
castline's LAUNCH and LOAD keys with pychromecast's.
Usage: pychromecast_load.py HOST PORT UUID URL CONTENT_TYPE TITLE THUMB"""
import json
import sys
import uuid

import pychromecast

from polling import poll

host, port, device_uuid, url, content_type, title, thumb = sys.argv[1:8]
cast = pychromecast.get_chromecast_from_host((host, int(port), uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
media = cast.media_controller
media.play_media(url, content_type, title=title, thumb=thumb)
media.block_until_active(timeout=15)
poll(lambda: media.status.player_state == "PLAYING", 15)
state = media.status.player_state
cast.disconnect(timeout=5)
print(json.dumps({"playerState": state}), flush=True)
sys.exit(0 if state == "PLAYING" else 1)
