"""Home Assistant MQTT discovery payloads against the committed key table
(Tests/Fixtures/home-assistant/mqtt-discovery-keys.json, transcribed from HA's documentation),
and HA's way of rendering a command_template (Jinja2, `value` bound to what the user entered).
HA cannot run here (it needs Python >= 3.13), so these stand in for its schemas."""
import json
import os
import re

import jinja2

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "home-assistant", "mqtt-discovery-keys.json")
with open(TABLE_PATH) as f:
    TABLE = json.load(f)


def problems(component, payload):
    """What the table finds wrong with one payload: [] when nothing."""
    rules = TABLE["components"].get(component)
    if rules is None:
        return [f"no rules for {component}"]
    common = TABLE["common"]
    allowed = set(rules["allowed"]) | (set() if rules.get("no_common") else set(common["allowed"]))
    out = [f"missing {k}" for k in rules.get("required", []) if k not in payload]
    out += [f"unknown {k}" for k in payload if k not in allowed]
    out += [f"deprecated {k}" for k in common["deprecated"] if k in payload]
    for values in (common.get("values", {}), rules.get("values", {})):
        out += [f"bad {k}: {payload[k]!r}" for k, options in values.items() if k in payload and payload[k] not in options]
    out += [f"both {pair}" for pair in common["exclusive"] if all(k in payload for k in pair)]
    if "default_entity_id" in payload and not re.fullmatch(rf"{component}\.[a-z0-9_]+", payload["default_entity_id"]):
        out.append(f"bad default_entity_id {payload['default_entity_id']}")
    device = payload.get("device")
    if device is not None:
        out += [f"unknown device.{k}" for k in device if k not in common["device"]["allowed"]]
        if not any(k in device for k in common["device"]["one_of_required"]):
            out.append("device without identifiers")
    origin = payload.get("origin")
    if origin is not None:
        out += [f"unknown origin.{k}" for k in origin if k not in common["origin"]["allowed"]]
        out += [f"missing origin.{k}" for k in common["origin"]["required"] if k not in origin]
    for item in payload.get("availability", []):
        out += [f"unknown availability.{k}" for k in item if k not in common["availability_item"]["allowed"]]
        if "topic" not in item:
            out.append("availability without topic")
    return out


def render_command(template, value):
    """A command_template rendered as HA renders it: Jinja2, `value` the entered text (HA's
    environment adds filters of its own; `tojson` and `int` are Jinja's)."""
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(template).render(value=value)


def render_value(template, value_json):
    """A value_template rendered on a state message, as HA renders it: Jinja2 with `value_json`
    the parsed payload (Jinja's own filters; an attribute missing is undefined, which `default`
    catches)."""
    return jinja2.Environment().from_string(template).render(value_json=value_json)
