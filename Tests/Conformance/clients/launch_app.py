"""Launches the Default Media Receiver with pychromecast and leaves it running.
Usage: launch_app.py HOST PORT UUID"""
import json
import sys
import uuid

import pychromecast

from polling import poll

host, port, device_uuid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cast = pychromecast.get_chromecast_from_host((host, port, uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
cast.start_app("CC1AD845")
poll(lambda: cast.status is not None and cast.status.app_id == "CC1AD845", 10)
app_id = cast.status.app_id if cast.status else None
cast.disconnect(timeout=5)
print(json.dumps({"app_id": app_id}), flush=True)
