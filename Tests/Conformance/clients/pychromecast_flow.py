"""Drives the simulator with unmodified pychromecast 14 and prints what pychromecast observed as
one JSON line. Usage: pychromecast_flow.py HOST PORT UUID"""
import json
import sys
import uuid

import pychromecast

from polling import poll

host, port, device_uuid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
observed = {}


def wait_for(predicate, timeout=10.0):
    return bool(poll(predicate, timeout))


cast = pychromecast.get_chromecast_from_host(
    (host, port, uuid.UUID(device_uuid), "Chromecast", "castline sim"), tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
observed["connected"] = cast.socket_client.is_connected
observed["friendly_name"] = cast.cast_info.friendly_name
observed["initial_app"] = cast.status.app_id if cast.status else None

mc = cast.media_controller
mc.play_media("http://media.invalid/castline/big-buck-bunny.mp4", "video/mp4", title="Big Buck Bunny")
mc.block_until_active(timeout=15)
observed["app_after_play"] = cast.status.app_id
observed["reached_playing"] = wait_for(lambda: mc.status.player_state == "PLAYING")
observed["title"] = mc.status.title
observed["content_type"] = mc.status.content_type
observed["content_id"] = mc.status.content_id

mc.pause()
observed["reached_paused"] = wait_for(lambda: mc.status.player_state == "PAUSED")

mc.seek(42.5)
observed["seek_ok"] = wait_for(lambda: abs((mc.status.current_time or 0) - 42.5) < 0.01)
observed["current_time_after_seek"] = mc.status.current_time

cast.set_volume(0.35)
observed["volume_ok"] = wait_for(lambda: cast.status is not None and abs(cast.status.volume_level - 0.35) < 1e-6)
observed["volume_level"] = cast.status.volume_level

cast.quit_app()
observed["quit_ok"] = wait_for(lambda: cast.status is not None and cast.status.app_id is None)
observed["app_after_quit"] = cast.status.app_id
cast.disconnect(timeout=5)
print(json.dumps(observed), flush=True)
