"""`castline plugins test`: the plugin harness on the example plugins (with their scripts and the
smoke test, in process and isolated), on a wrong expectation, on a plugin that crashes and on a
bad script; and an out-of-tree Swift plugin built against SDK/ alone (no swift-nio resolved),
loaded and tested by the castline under test (`make sdk-test` runs this file on a release
castline). Everything runs on 127.0.0.1: the harness's simulated device is in its own process.
"""
import json
import os
import shutil
import subprocess
import textwrap

from conftest import REPO, castline_binary

CASTLINE = castline_binary()
BIN = os.path.dirname(CASTLINE)
# The example plugins and the test fixtures are built next to the debug castline; a release
# castline (make sdk-test) takes them from there too.
PLUGINS = os.environ.get("CASTLINE_PLUGIN_BUILD", BIN)


def harness(*args, timeout=120):
    return subprocess.run([CASTLINE, "plugins", "test", *args], capture_output=True, text=True, timeout=timeout)


def plugin(name):
    path = os.path.join(PLUGINS, f"lib{name}.so")
    assert os.path.exists(path), f"{path} is not built"
    return path


def lines(result):
    return [line for line in result.stdout.splitlines() if line.startswith(("ok ", "not ok "))]


def test_example_plugins_pass_their_scripts(workdir):
    # The Swift example also from a copy outside castline's folders, so in a helper process: a
    # send after its app stopped is refused there at once too, as in process.
    isolated = os.path.join(workdir, "libping-isolated.so")
    shutil.copy(plugin("CastlinePluginPingChannel"), isolated)
    for path, script, steps in [(plugin("CastlinePluginPingChannel"), "Plugins/PingChannel/harness.json", 11),
                                (isolated, "Plugins/PingChannel/harness.json", 11),
                                (plugin("CastlinePluginEchoChannelC"), "Plugins/EchoChannelC/harness.json", 8)]:
        result = harness(path, "--script", os.path.join(REPO, script), "--json")
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.loads(result.stdout)
        assert report["passed"] is True and report["abi_minor"] == 2
        # load, open, every step, and the closing check for crashes, hangs and overruns.
        assert len(report["results"]) == steps + 3, report
        assert all(r["passed"] for r in report["results"]), report
        told = [r for r in report["results"] if r["step"] in ("app stop", "app relaunch", "app drop")]
        assert len(told) >= 2 and all("the plugin was told" in r["detail"] for r in told), told


def test_smoke_runs_a_plugin_isolated_as_castline_would(workdir):
    # A file outside castline's own folder runs in a helper process, as `castline run` runs it.
    copy = os.path.join(workdir, "libping-copy.so")
    shutil.copy(plugin("CastlinePluginPingChannel"), copy)
    result = harness(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    assert found[0].startswith("ok 1 - load: ping-channel") and "isolated" in found[0], found
    # The smoke: open, a command, stop, relaunch, drop (each told to the plugin), a command, no fault.
    assert [line.split(" - ", 1)[1].split(":")[1].strip() for line in found[1:]] == [
        "open", "command {}", "app stop", "app relaunch", "app drop", "command {}", "no crash, hang or overrun"], found


def test_a_wrong_expectation_fails_with_what_came(workdir):
    script = os.path.join(workdir, "wrong.json")
    with open(script, "w") as f:
        json.dump({"app": {"urn:x-cast:org.castline.example.ping": {"PING": {"type": "PONG"}}},
                   "steps": [{"command": {}, "expect": {"reply": {"pong": False}}},
                             {"expect_sent": {"type": "NEVER"}, "within": 0.5}]}, f)
    result = harness(plugin("CastlinePluginPingChannel"), "--script", script)
    assert result.returncode == 1, result.stdout
    failed = [line for line in lines(result) if line.startswith("not ok")]
    assert len(failed) == 2, result.stdout
    assert '"pong":true' in failed[0] and 'expected it to contain {"pong":false}' in failed[0], failed
    assert "nothing matching reached the app" in failed[1], failed


def test_a_crashing_plugin_fails_and_the_harness_lives(workdir):
    copy = os.path.join(workdir, "libcrashes.so")
    shutil.copy(plugin("TestPluginCrashesInChannel"), copy)
    script = os.path.join(workdir, "crash.json")
    with open(script, "w") as f:
        json.dump({"app": {"urn:x-cast:org.castline.test": "echo"},
                   "steps": [{"command": {"do": "crash"}, "timeout": 5}]}, f)
    result = harness(copy, "--script", script)
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [line for line in lines(result) if line.startswith("not ok")]
    # The command never completes (the helper died), and the closing check names the crash.
    assert any("command" in line for line in failed), failed
    assert any("no crash, hang or overrun" in line and "SIGSEGV" in line for line in failed), failed


def test_a_bad_script_is_a_usage_error(workdir):
    script = os.path.join(workdir, "bad.json")
    with open(script, "w") as f:
        json.dump({"steps": [{"command": {}}, {"app": "explode"}]}, f)
    result = harness(plugin("CastlinePluginPingChannel"), "--script", script)
    assert result.returncode == 2
    assert "steps[1]: app: one of stop, relaunch, drop" in result.stderr, result.stderr


HELLO = textwrap.dedent("""\
    import CastJSON
    import CastPluginKit

    final class HelloChannel: ChannelPlugin {
        static let namespaces = ["urn:x-cast:org.example.hello"]
        private let host: PluginHostServices
        init(host: PluginHostServices, config: String, session: String) throws(PluginError) { self.host = host }
        func didReceive(namespace: String, source: String, payload: String) {
            host.log(.info, class: "HelloChannel", "heard the app", fields: ["payload": .string(payload)])
        }
        func command(id: UInt64, json: String) {
            let rc = host.send(namespace: Self.namespaces[0], payload: #"{"type":"HELLO"}"#)
            if rc == 0 { host.complete(command: id, json: #"{"sent":true}"#) } else { host.fail(command: id, reason: "send refused (\\(rc))") }
        }
        func close() {}
        func appDidChange(_ event: ChannelAppEvent, info: String) {
            host.log(.info, class: "HelloChannel", "app event \\(event)", fields: ["info": .string(info)])
        }
    }

    enum HelloPlugin: CastlinePlugin {
        static let id = "hello-channel"; static let version = "0.1.0"
        static let summary = "an out-of-tree channel"; static let license = "MIT"
        static let features: [PluginFeatureDefinition] = [.channel(HelloChannel.self, id: "hello")]
    }

    @_cdecl("castline_plugin_v1_describe")
    public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(HelloPlugin.self) }
    """)


def test_an_out_of_tree_swift_plugin_builds_against_the_sdk_alone_and_loads(workdir):
    package = os.path.join(workdir, "hello-channel")
    os.makedirs(os.path.join(package, "Sources", "HelloChannel"))
    with open(os.path.join(package, "Package.swift"), "w") as f:
        f.write(textwrap.dedent(f"""\
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(
                name: "hello-channel",
                products: [.library(name: "HelloChannel", type: .dynamic, targets: ["HelloChannel"])],
                dependencies: [.package(path: "{os.path.join(REPO, 'SDK')}")],
                targets: [.target(name: "HelloChannel", dependencies: [.product(name: "CastPluginKit", package: "SDK")])]
            )
            """))
    with open(os.path.join(package, "Sources", "HelloChannel", "HelloChannel.swift"), "w") as f:
        f.write(HELLO)
    deps = subprocess.run(["swift", "package", "--package-path", os.path.join(REPO, "SDK"), "show-dependencies", "--format", "json"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(deps.stdout)["dependencies"] == [], deps.stdout
    build = subprocess.run(["swift", "build", "--package-path", package, "--scratch-path", os.path.join(workdir, "build")],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    resolved = os.path.join(package, "Package.resolved")
    assert not os.path.exists(resolved) or "swift-nio" not in open(resolved).read()
    built = os.path.join(workdir, "build", "debug", "libHelloChannel.so")
    inspect = subprocess.run([CASTLINE, "plugins", "inspect", built], capture_output=True, text=True, timeout=60)
    assert inspect.returncode == 0 and "hello-channel" in inspect.stdout, inspect.stdout + inspect.stderr
    result = harness(built, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["plugin"] == "hello-channel" and report["passed"], report
    assert [r["detail"] for r in report["results"] if r["step"] == "command {}"] == ['answered {"sent":true}'] * 2, report
