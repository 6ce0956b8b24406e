"""Speaker groups (multizone): a simulated group of three devices against unmodified pychromecast's
MultizoneManager / MultizoneController, and the group's own mDNS record through a real avahi-daemon
(private D-Bus, `lo` only, inside the test's network namespace)."""
import json
import os
import signal
import subprocess
import time

import pytest

from hub import api
from conftest import REPO, Simulator, castline_binary, run_client, start_avahi, stop_avahi, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns) and avahi-daemon with a private D-Bus")

GROUP_CONFIG = os.path.join(REPO, "configs", "sim-groups.json")


@pytest.fixture
def avahi(netns, workdir):
    try:
        process, env = start_avahi(netns, workdir)
    except RuntimeError as error:
        pytest.fail(str(error))
    yield env
    stop_avahi(process)


@pytest.fixture
def group_sim(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--config", GROUP_CONFIG, "--no-mdns"])
    yield simulator
    code = simulator.stop()
    assert code == 0, f"castline sim exited with {code} on SIGTERM: {simulator.log_text()}"


def test_pychromecast_multizone_manager_follows_the_simulated_group(netns, group_sim):
    group = group_sim.ready["groups"][0]
    devices = group_sim.ready["devices"]
    assert group["model"] == "Google Cast Group" and group["castPort"] != 8009
    assert group["address"] == devices[group["leader"]]["address"]
    seen = run_client(netns, "pychromecast_multizone.py", group_sim.control_socket, "0")
    assert seen["cast_type"] == "group"
    # The member list matches the configuration, in pychromecast's own MultizoneController.
    assert seen["members_match"], seen
    assert seen["members"] == seen["configured_members"]
    # get_multizone_memberships for each member lists the group.
    assert all(groups == [seen["group_uuid"]] for groups in seen["memberships"].values()), seen
    # DEVICE_REMOVED / DEVICE_ADDED are followed.
    assert seen["follows_removed"] and seen["memberships_after_remove"] == [], seen
    assert seen["follows_added"] and seen["memberships_after_add"] == [seen["group_uuid"]], seen
    removed_events = [e for e in seen["events"] if e[0] == "removed"]
    assert len(removed_events) == 1 and removed_events[0][2] == seen["group_uuid"], seen["events"]
    # A group cast plays, every member's multizone state says so, and pychromecast hands the
    # group's media status to each member's listener.
    assert seen["group_playing"] and seen["members_report_playing"], seen
    assert all(states == ["PLAYING"] for states in seen["member_media_states"].values()), seen
    inbound = [(f["namespace"].rsplit(".", 1)[-1], f.get("type")) for f in group_sim.frames()
               if f["event"] == "frame" and f["direction"] == "in"]
    assert ("multizone", "GET_STATUS") in inbound


def test_member_cast_and_leader_move_show_in_list_and_eureka_info(netns, group_sim):
    group = group_sim.ready["groups"][0]
    assert group_sim.control({"command": "push", "device": group["uuid"], "namespace": "urn:x-cast:com.example",
                              "payload": {"type": "HELLO"}})["ok"], "a group endpoint is selectable by uuid"
    moved = group_sim.control({"command": "group-leader", "group": 0, "leader": 1})
    assert moved["ok"], moved
    devices = group_sim.ready["devices"]
    assert moved["group"]["address"] == devices[1]["address"] and moved["group"]["castPort"] != group["castPort"]
    # The members' eureka_info names the new leader (pychromecast's get_multizone_status reads it).
    out = netns.run("curl", "-s", f"http://{devices[2]['address']}:8008/setup/eureka_info?params=multizone")
    assert f"{devices[1]['address']}:{moved['group']['castPort']}" in out.stdout, out.stdout
    out = netns.run("curl", "-s", f"http://{devices[1]['address']}:8008/setup/eureka_info?params=multizone")
    assert '"elected_leader":"self"' in out.stdout, out.stdout
    # The old endpoint is closed.
    refused = netns.run("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                        f"http://{group['address']}:{group['httpPort']}/setup/eureka_info")
    assert refused.stdout in ("000", ""), refused.stdout
    bad = group_sim.control({"command": "group-remove", "group": 0, "device": 1})
    assert not bad["ok"] and "leader" in bad["error"], bad
    bad = group_sim.control({"command": "group-leader", "group": 0, "leader": 1})
    assert not bad["ok"] and "already leads" in bad["error"], bad


def browse(netns, env):
    result = subprocess.run(netns.command("avahi-browse", "-rpt", "_googlecast._tcp"), env=env, capture_output=True,
                            text=True, timeout=20)
    return [line.split(";") for line in result.stdout.splitlines() if line.startswith("=")]


def test_group_has_its_own_mdns_record_that_moves_with_the_leader(netns, workdir, avahi):
    sim = Simulator(netns, workdir, extra=["--config", GROUP_CONFIG], env=avahi)
    try:
        group = sim.ready["groups"][0]

        def group_record():
            for fields in browse(netns, avahi):
                if f"id={group['uuid']}" in fields[9]:
                    return fields
            return None

        record = wait_until(group_record, 15, "the group's _googlecast._tcp record")
        assert record[7] == group["address"] and int(record[8]) == group["castPort"], record
        assert '"md=Google Cast Group"' in record[9] and f'"fn={group["name"]}"' in record[9], record

        # castline discover lists the group next to the devices, marked as a group with its members.
        listed = netns.run(castline_binary(), "discover", "--json", "--timeout", "3", env=avahi, timeout=30)
        assert listed.returncode == 0, listed.stderr
        found = {d["id"]: d for d in map(json.loads, listed.stdout.splitlines())}
        assert all(d["uuid"] in found for d in sim.ready["devices"]), listed.stdout
        seen = found.get(group["uuid"])
        assert seen and seen["group"] is True and seen["port"] == group["castPort"], listed.stdout
        names = [m["name"] for m in seen["members"]]
        assert names == [sim.ready["devices"][i]["name"] for i in group["memberIndexes"]], seen
        assert [m.get("channel") for m in seen["members"]] == [None, "LEFT", "RIGHT"], seen
        assert not any(found[d["uuid"]].get("group") for d in sim.ready["devices"])
        table = netns.run(castline_binary(), "discover", "--timeout", "3", env=avahi, timeout=30)
        line = next(l for l in table.stdout.splitlines() if group["uuid"] in l)
        assert "group: Kitchen speaker, Living Room left (left), Living Room right (right)" in line, table.stdout
        moved = sim.control({"command": "group-leader", "group": 0, "leader": 2})["group"]
        wait_until(lambda: (r := group_record()) is not None and r[7] == moved["address"] and int(r[8]) == moved["castPort"],
                   15, "the group's record at the new leader")
    finally:
        code = sim.stop()
        assert code == 0, sim.log_text()


def start_daemon(netns, workdir, env, jobs=""):
    """`castline run` with avahi discovery and its API on a socket in `workdir`."""
    config = os.path.join(workdir, "castline.yaml")
    socket_path = os.path.join(workdir, "api.sock")
    with open(config, "w") as f:
        f.write(f"""discovery:
  providers: [avahi]
logging:
  rules: "info,CastChannel.*:warning"
api:
  socket: {socket_path}
daemon: {{jobs_file: {workdir}/jobs.json}}
{jobs}
""")
    log = open(os.path.join(workdir, "daemon.stderr"), "w")
    process = subprocess.Popen(netns.command(castline_binary(), "run", "--config", config), stdout=subprocess.DEVNULL,
                               stderr=log, env=env)
    return process, socket_path, log


def stop_daemon(process, log):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    log.close()
    with open(log.name) as f:
        return process.returncode, f.read()


def device_json(socket_path, uuid):
    try:
        status, body, _ = api(socket_path, "GET", f"/v1/devices/{uuid}")
    except OSError:   # the daemon is not listening yet
        return {}
    return body if status == 200 else {}


def test_daemon_casts_to_the_group_follows_a_leader_move_and_reports_members(netns, workdir, avahi):
    sim = Simulator(netns, workdir, extra=["--config", GROUP_CONFIG], env=avahi)
    daemon, socket_path, log = start_daemon(netns, workdir, avahi)
    try:
        group = sim.ready["groups"][0]
        devices = sim.ready["devices"]
        uuids = [d["uuid"] for d in devices] + [group["uuid"]]
        wait_until(lambda: all(device_json(socket_path, u).get("link") == "connected" for u in uuids), 30,
                   "the daemon connected to the 3 speakers and the group")
        wait_until(lambda: len(device_json(socket_path, group["uuid"]).get("group", {}).get("members", [])) == 3, 5,
                   "the group's members in its status")
        status, body, _ = api(socket_path, "POST", f"/v1/devices/{group['uuid']}/cast",
                              {"media": "http://media.invalid/castline/song.mp3", "title": "Song"})
        assert status == 200, body
        wait_until(lambda: device_json(socket_path, group["uuid"]).get("state") == "PLAYING", 15, "the group playing")

        def members_playing():
            listed = sim.control({"command": "list"})["devices"]
            return all([g["name"] for g in d["state"]["multizone"]["castingGroups"]] == [group["name"]] for d in listed)

        wait_until(members_playing, 5, "all three members playing the group's media (simulator's multizone state)")
        wait_until(lambda: all(m["state"] == "PLAYING" for m in device_json(socket_path, group["uuid"])["group"]["members"]),
                   5, "every member PLAYING in the group's status")
        wait_until(lambda: [g["name"] for g in device_json(socket_path, devices[1]["uuid"]).get("playsInGroups", [])]
                   == [group["name"]], 5, "a member's status naming the group it plays in")
        shown = netns.run(castline_binary(), "status", "--device", devices[1]["uuid"], "--api-socket", socket_path)
        assert f"plays in group: {group['name']}" in shown.stdout, shown.stdout + shown.stderr

        # The leader moves mid-playback: the same session resumes on the new endpoint within 2 s.
        before = device_json(socket_path, group["uuid"])
        moved = sim.control({"command": "group-leader", "group": 0, "leader": 1})["group"]
        moved_at = time.monotonic()
        new_endpoint = f"{moved['address']}:{moved['castPort']}"

        def resumed():
            now = device_json(socket_path, group["uuid"])
            return now if (now.get("endpoint") == new_endpoint and now.get("link") == "connected"
                           and now.get("state") == "PLAYING") else None

        after = wait_until(resumed, 5, "the group's session on the new endpoint")
        took = time.monotonic() - moved_at
        print(f"group session resumed on the new endpoint {took:.2f} s after the leader move")
        assert took < 2.0, f"resumed after {took:.2f} s"
        assert after["contentId"] == before["contentId"] and after["sessionId"] == before["sessionId"], (before, after)
        assert after["currentTime"] >= before["currentTime"], (before, after)

        # A member is removed: the group's status changes within 1 s.
        removed_at = time.monotonic()
        sim.control({"command": "group-remove", "group": 0, "device": 2})
        wait_until(lambda: len(device_json(socket_path, group["uuid"])["group"]["members"]) == 2, 1, "two members")
        assert time.monotonic() - removed_at < 1.0

        # A member casts on its own: the group's status reports it as left.
        sim.control({"command": "member-cast", "device": 0})
        wait_until(lambda: {m["name"]: m["state"] for m in device_json(socket_path, group["uuid"])["group"]["members"]}
                   .get(devices[0]["name"]) == "LEFT", 5, "the member reported as left")
        shown = netns.run(castline_binary(), "status", "--device", group["uuid"], "--api-socket", socket_path)
        assert f"{devices[0]['name']} (left: casting on its own)" in shown.stdout, shown.stdout + shown.stderr
    finally:
        code, text = stop_daemon(daemon, log)
        sim.stop()
    assert code == 0, text[-3000:]
    assert "leader moved" in text, text[-3000:]


def test_a_job_on_the_group_keeps_it_playing_across_a_leader_move_and_a_leader_reboot(netns, workdir, avahi):
    sim = Simulator(netns, workdir, extra=["--config", GROUP_CONFIG], env=avahi)
    group = sim.ready["groups"][0]
    daemon, socket_path, log = start_daemon(netns, workdir, avahi, jobs=f"""jobs:
  - name: downstairs-radio
    devices: ["{group['name']}"]
    media: {{url: "http://media.invalid/castline/radio.mp3", title: Radio}}
""")
    try:
        def group_media():
            listed = sim.control({"command": "list"})["groups"][0]
            media = listed["endpoint"]["state"].get("media") or {}
            return listed, media

        def playing_at(address):
            listed, media = group_media()
            return (listed["address"] == address and media.get("playerState") == "PLAYING"
                    and media.get("contentId") == "http://media.invalid/castline/radio.mp3")

        wait_until(lambda: playing_at(group["address"]), 30, "the job playing on the group")
        moved = sim.control({"command": "group-leader", "group": 0, "leader": 1})["group"]
        wait_until(lambda: playing_at(moved["address"]), 10, "the job still playing after the leader move")
        # The leader reboots: the group elects the next member without the session; the job casts again.
        sim.control({"command": "reboot", "device": 1, "downFor": 3})
        after = sim.control({"command": "list"})["groups"][0]
        assert after["leader"] == 2 and after["address"] != moved["address"], after
        wait_until(lambda: playing_at(after["address"]), 20, "the job playing again after the leader's reboot")
        # The simulator shows PLAYING as it answers the LOAD; the job learns it from the MEDIA_STATUS that follows.
        def job_playing():
            status, job, _ = api(socket_path, "GET", "/v1/jobs/downstairs-radio")
            assert status == 200, job
            return job["devices"][0]["state"] == "playing"
        wait_until(job_playing, 5, "the job reporting the group as playing")
    finally:
        code, text = stop_daemon(daemon, log)
        sim.stop()
    assert code == 0, text[-3000:]


@pytest.mark.parametrize("takeover", ["yield", "reclaim"])
def test_a_job_on_a_member_treats_a_group_cast_as_another_sender(netns, workdir, avahi, takeover):
    sim = Simulator(netns, workdir, extra=["--config", GROUP_CONFIG], env=avahi)
    group = sim.ready["groups"][0]
    member = sim.ready["devices"][1]
    url = "http://media.invalid/castline/member-show.mp4"
    daemon, socket_path, log = start_daemon(netns, workdir, avahi, jobs=f"""jobs:
  - name: member-show
    devices: ["{member['name']}"]
    media: {{url: "{url}", title: Show}}
    takeover: {takeover}
""")
    try:
        def job_state():
            try:
                status, job, _ = api(socket_path, "GET", "/v1/jobs/member-show")
            except OSError:   # the daemon is not listening yet
                return None
            return job["devices"][0]["state"] if status == 200 and job.get("devices") else None

        def member_media():
            return (sim.control({"command": "list", "device": 1})["devices"][0]["state"].get("media") or {}).get("contentId")

        wait_until(lambda: job_state() == "playing" and member_media() == url, 30, "the job playing on the member")
        wait_until(lambda: device_json(socket_path, group["uuid"]).get("link") == "connected", 20, "the group's link")
        status, body, _ = api(socket_path, "POST", f"/v1/devices/{group['uuid']}/cast",
                              {"media": "http://media.invalid/castline/group.mp3", "title": "Group"})
        assert status == 200, body
        if takeover == "yield":
            wait_until(lambda: job_state() == "yielding", 10, "the job yielding to the group")
            listed = sim.control({"command": "list"})
            assert [g["name"] for g in listed["devices"][1]["state"]["multizone"]["castingGroups"]] == [group["name"]]
            assert member_media() is None, "the group's cast stopped the job's app on the member"
            # Nothing fights: for 1.5 s (longer than a fighting job's recast would take) the member
            # stays in the group's playback.
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                assert job_state() == "yielding" and member_media() is None
                time.sleep(0.1)   # the poll interval
            # The group stops: the job takes the member back.
            status, body, _ = api(socket_path, "POST", f"/v1/devices/{group['uuid']}/stop", {})
            assert status == 200, body
            wait_until(lambda: job_state() == "playing" and member_media() == url, 15, "the job playing again")
        else:
            # reclaim: the job casts again at once; the member leaves the group's playback.
            wait_until(lambda: job_state() == "playing" and member_media() == url, 15, "the job reclaiming the member")
            wait_until(lambda: {m["name"]: m["state"] for m in device_json(socket_path, group["uuid"])["group"]["members"]}
                       .get(member["name"]) == "LEFT", 5, "the group reporting the member as left")
    finally:
        code, text = stop_daemon(daemon, log)
        sim.stop()
    assert code == 0, text[-3000:]
    assert "speaker group Downstairs" in text, text[-3000:]


def test_announce_on_the_group_restores_the_group(netns, workdir, avahi):
    with open(GROUP_CONFIG) as f:
        config = json.load(f)
    config["mediaRules"] = [{"contentId": "*chime*", "duration": 2}, {"contentId": "*song*", "duration": 600}]
    config_path = os.path.join(workdir, "sim-groups-rules.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    sim = Simulator(netns, workdir, extra=["--config", config_path], env=avahi)
    group = sim.ready["groups"][0]
    daemon, socket_path, log = start_daemon(netns, workdir, avahi)
    song = "http://media.invalid/castline/song.mp3"
    try:
        wait_until(lambda: device_json(socket_path, group["uuid"]).get("link") == "connected", 30, "the group's link")
        status, body, _ = api(socket_path, "POST", f"/v1/devices/{group['uuid']}/cast", {"media": song, "title": "Song"})
        assert status == 200, body
        wait_until(lambda: device_json(socket_path, group["uuid"]).get("state") == "PLAYING", 10, "the group playing")
        before = device_json(socket_path, group["uuid"])
        status, answer, _ = api(socket_path, "POST", f"/v1/devices/{group['uuid']}/announce",
                                {"media": "http://media.invalid/castline/chime.mp3", "volume": 70})
        assert status == 200 and answer.get("restored") is True, answer
        after = wait_until(lambda: (d := device_json(socket_path, group["uuid"])).get("contentId") == song
                           and d.get("state") == "PLAYING" and d, 10, "the group's song back")
        assert after["currentTime"] >= before["currentTime"], (before, after)
        listed = sim.control({"command": "list"})
        assert all([g["name"] for g in d["state"]["multizone"]["castingGroups"]] == [group["name"]] for d in listed["devices"])
    finally:
        code, text = stop_daemon(daemon, log)
        sim.stop()
    assert code == 0, text[-3000:]


def test_castline_cast_to_the_group_and_a_one_shot_status_of_a_member(netns, group_sim):
    group = group_sim.ready["groups"][0]
    member = group_sim.ready["devices"][2]
    cast = netns.run(castline_binary(), "cast", "http://media.invalid/castline/song.mp3", "--device",
                     f"{group['address']}:{group['castPort']}", timeout=60)
    assert cast.returncode == 0 and "PLAYING" in cast.stdout, cast.stdout + cast.stderr
    shown = netns.run(castline_binary(), "status", "--device", f"{member['address']}:{member['castPort']}", "--direct",
                      "--json", timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout.splitlines()[-1]).get("playsInGroups") == [{"id": group["uuid"], "name": group["name"]}], shown.stdout
