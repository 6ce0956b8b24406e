"""Puts a device in a known state with pychromecast, as another sender would, and leaves it so.
Usage: media_setup.py HOST PORT UUID MODE BASE_URL
  movie   volume 35 %, movie.mp4 with an English subtitle track at 1:30, the subtitles on
  paused  the same, paused
  queue   a 3-item queue (one.mp4, two.mp4, three.mp4) at item 2, repeat all, volume 35 %
  app     the simulator's plugin-examples app (CA571E00), which reports no media status
Prints the device's media status as pychromecast saw it. Setup is not under test: its launch may take
up to 30 s (on a loaded two-core machine pychromecast's default 10 s is not always enough)."""
import json
import sys
import uuid

import pychromecast

from polling import poll

host, port, device_uuid, mode, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
cast = pychromecast.get_chromecast_from_host((host, port, uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
cast.set_volume(0.35)
media = cast.media_controller
if mode == "app":
    cast.start_app("CA571E00", timeout=30)
    poll(lambda: cast.status is not None and cast.status.app_id == "CA571E00", 10)
    result = {"app_id": cast.status.app_id}
else:
    cast.start_app("CC1AD845", timeout=30)
    poll(lambda: cast.status is not None and cast.status.app_id == "CC1AD845", 10)
    if mode == "queue":
        items = [{"media": {"contentId": f"{base}/{name}.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"},
                  "autoplay": True} for name in ("one", "two", "three")]
        media.send_message({"type": "QUEUE_LOAD", "items": items, "startIndex": 1, "repeatMode": "REPEAT_ALL"}, inc_session_id=True)
        poll(lambda: media.status.player_state == "PLAYING" and media.status.content_id == f"{base}/two.mp4", 15)
    else:
        media.play_media(f"{base}/movie.mp4", "video/mp4", title="Movie", current_time=90, stream_type="BUFFERED",
                         subtitles=f"{base}/movie.en.vtt", subtitles_lang="en-US")
        poll(lambda: media.status.player_state == "PLAYING" and media.status.content_id == f"{base}/movie.mp4", 15)
        media.enable_subtitle(1)
        poll(lambda: media.status.current_subtitle_tracks == [1], 10)
        if mode == "paused":
            media.pause()
            poll(lambda: media.status.player_state == "PAUSED", 10)
    result = {"content_id": media.status.content_id, "state": media.status.player_state,
              "tracks": media.status.current_subtitle_tracks, "time": media.status.current_time}
poll(lambda: cast.status is not None and abs(cast.status.volume_level - 0.35) < 0.01, 10)
result["volume"] = cast.status.volume_level
cast.disconnect(timeout=5)
print(json.dumps(result), flush=True)
