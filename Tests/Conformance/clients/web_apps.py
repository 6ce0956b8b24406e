"""pychromecast's own web-page controllers against a device: DashCastController.load_url, or
HomeAssistantController (connect, then show_lovelace_view). Prints what the controller saw.
DashCast answers nothing (pychromecast's callback never fires, with a real device too), so in
that mode the client prints {"sent": true} and keeps the connection until its stdin closes: the
test reads the page off the device meanwhile.
Usage: web_apps.py HOST PORT UUID dashcast URL FORCE
       web_apps.py HOST PORT UUID homeassistant HASS_URL HASS_UUID TOKEN VIEW"""
import json
import sys
import uuid

import pychromecast
from pychromecast.controllers.dashcast import DashCastController
from pychromecast.controllers.homeassistant import HomeAssistantController

from polling import poll

host, port, device_uuid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cast = pychromecast.get_chromecast_from_host((host, port, uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
if mode == "dashcast":
    url, force = sys.argv[5], sys.argv[6] == "true"
    controller = DashCastController()
    cast.register_handler(controller)
    controller.load_url(url, force=force)
    poll(lambda: cast.status is not None and cast.status.app_id == "84912283", 10)
    print(json.dumps({"sent": True, "app_id": cast.status.app_id if cast.status else None}), flush=True)
    sys.stdin.read()
    result = {"app_id": cast.status.app_id if cast.status else None}
else:
    hass_url, hass_uuid, token, view = sys.argv[5:9]
    controller = HomeAssistantController(hass_url=hass_url, hass_uuid=hass_uuid, client_id=None, refresh_token=token,
                                         unregister=lambda: None)
    cast.register_handler(controller)
    controller.show_lovelace_view(view)
    poll(lambda: controller.status is not None and controller.status.get("lovelacePath") == view, 15)
    result = {"status": controller.status, "connected": controller.hass_connected}
cast.disconnect(timeout=5)
print(json.dumps(result), flush=True)
