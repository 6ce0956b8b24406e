"""The shipped systemd unit's process sandbox, applied without systemd: its syscall filter
(`SystemCallFilter=` lines in order, `SystemCallErrorNumber=`), `MemoryDenyWriteExecute=` and
`LimitNOFILE=`, read from configs/castline.service and enforced with libseccomp (through ctypes:
no extra package). Run as a launcher, last before castline (after `ip netns exec` and setpriv,
which need syscalls the filter denies):

    python3 unit_sandbox.py POLICY.json -- castline run --config ...

POLICY.json is `unit_policy(...)` with the allowed set as a list (`write_policy`).

Group contents come from this machine's `systemd-analyze syscall-filter`, so the filter is the
one this systemd would install. `RestrictAddressFamilies=` is emulated too (socket() of
another family fails). What is not: the mount namespace (ProtectSystem=, PrivateTmp=...) and
capabilities (castline runs unprivileged anyway).
"""
import ctypes
import errno as errnolib
import os
import re
import socket
import subprocess

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_MASKED_EQ = 7
PROT_WRITE, PROT_EXEC = 0x2, 0x4


def SCMP_ACT_ERRNO(code):
    return 0x00050000 | (code & 0xFFFF)


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def syscall_groups():
    """`@group` → its members (names and nested `@groups`), from systemd-analyze."""
    text = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, check=True).stdout
    groups, current = {}, None
    for line in text.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif current is not None and line.strip() and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def expand(names, groups, seen=None):
    seen = set() if seen is None else seen
    out = set()
    for name in names:
        if name.startswith("@"):
            if name in seen:
                continue
            seen.add(name)
            out |= expand(groups.get(name, []), groups, seen)
        else:
            out.add(name)
    return out


def unit_policy(unit_text):
    """The unit's sandbox as a dict: allowed syscalls (None: no filter), the errno for the others
    (None: the process is killed, systemd's default), memory_deny_write_execute, nofile."""
    groups = syscall_groups()
    allowed, errno_name, mdwe, nofile, families = None, None, False, None, None
    for raw in unit_text.splitlines():
        line = raw.strip()
        if line.startswith("SystemCallFilter="):
            value = line.split("=", 1)[1].strip()
            if not value:
                allowed = None
                continue
            deny = value.startswith("~")
            names = expand(value.lstrip("~").split(), groups)
            if allowed is None:
                if deny:
                    raise NotImplementedError("a deny-list-first SystemCallFilter= is not emulated")
                allowed = set()
            allowed = allowed - names if deny else allowed | names
        elif line.startswith("SystemCallErrorNumber="):
            errno_name = line.split("=", 1)[1].strip()
        elif line.startswith("MemoryDenyWriteExecute="):
            mdwe = line.split("=", 1)[1].strip() in ("yes", "true", "1")
        elif line.startswith("LimitNOFILE="):
            nofile = line.split("=", 1)[1].strip()
        elif line.startswith("RestrictAddressFamilies="):
            value = line.split("=", 1)[1].strip()
            if value.startswith("~"):
                raise NotImplementedError("a deny-list RestrictAddressFamilies= is not emulated")
            families = sorted(getattr(socket, name) for name in value.split())
    return {"allowed": allowed, "errno": errno_name, "memory_deny_write_execute": mdwe, "nofile": nofile,
            "families": families}


def write_policy(policy, path):
    import json
    with open(path, "w") as f:
        json.dump(dict(policy, allowed=None if policy["allowed"] is None else sorted(policy["allowed"])), f)
    os.chmod(path, 0o644)


def limits_prefix(policy):
    """The unit's LimitNOFILE= as a command prefix, to run as root before the user changes (an
    unprivileged process may not raise its hard limit), capped at this machine's hard limit (a
    container may forbid raising it even to root)."""
    import resource
    if not policy["nofile"]:
        return []
    ceiling = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    soft, _, hard = policy["nofile"].partition(":")
    soft, hard = min(int(soft), ceiling), min(int(hard or soft), ceiling)
    return ["prlimit", f"--nofile={soft}:{hard}", "--"]


def apply(policy):
    """Loads the filter into this process (and what it execs)."""
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    code = getattr(errnolib, policy["errno"]) if policy["errno"] else None
    denied = SCMP_ACT_ERRNO(code) if code is not None else SCMP_ACT_KILL_PROCESS
    default = denied if policy["allowed"] is not None else SCMP_ACT_ALLOW
    ctx = lib.seccomp_init(default)
    def add(action, name, mask=None, value=None, arg=2):
        number = lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:
            return  # not a syscall on this architecture
        if mask is None:
            result = lib.seccomp_rule_add_array(ctx, action, number, 0, None)
        else:
            result = lib.seccomp_rule_add_array(ctx, action, number, 1, (ArgCmp * 1)(ArgCmp(arg, SCMP_CMP_MASKED_EQ, mask, value)))
        if result != 0 and not (result == -errnolib.EACCES and action == default):  # the default already does it
            raise OSError(-result, f"seccomp_rule_add {name}")

    # As systemd does for MemoryDenyWriteExecute=: EPERM for a mapping both writable and
    # executable and for mprotect to executable. A syscall has either unconditional or
    # conditional rules in libseccomp, so these calls get one rule per value of the masked bits.
    guarded = {"mmap": PROT_WRITE | PROT_EXEC, "mprotect": PROT_EXEC, "pkey_mprotect": PROT_EXEC} \
        if policy["memory_deny_write_execute"] else {}
    families = policy.get("families")
    for name in sorted(policy["allowed"] or ()):
        if name not in guarded and not (name == "socket" and families is not None):
            add(SCMP_ACT_ALLOW, name)
    if families is not None and (policy["allowed"] is None or "socket" in policy["allowed"]):
        # RestrictAddressFamilies=: socket() only for the listed families (systemd: EAFNOSUPPORT;
        # here the other families get the filter's default action).
        for family in families:
            add(SCMP_ACT_ALLOW, "socket", 0xFFFFFFFF, family, arg=0)
    for name, mask in guarded.items():
        if policy["allowed"] is not None and name not in policy["allowed"]:
            continue
        for value in range(mask + 1):
            if value & mask == value:
                add(SCMP_ACT_ERRNO(errnolib.EPERM) if value == mask else SCMP_ACT_ALLOW, name, mask, value)
    if lib.seccomp_load(ctx) != 0:
        raise OSError(ctypes.get_errno(), "seccomp_load failed")


def read_unit(repo):
    with open(os.path.join(repo, "configs", "castline.service")) as f:
        return f.read()


def credentials(unit_text, commented=True):
    """`LoadCredential=NAME:PATH` lines as (name, path); with `commented`, also the ones the unit
    ships commented out (what an operator uncomments)."""
    pattern = r"^#?LoadCredential=([^:\s]+):(\S+)" if commented else r"^LoadCredential=([^:\s]+):(\S+)"
    return re.findall(pattern, unit_text, re.M)


def credentials_directory(creds, directory, uid, gid, sources):
    """What systemd does for LoadCredential=: each credential's file copied into `directory`
    (mode 0400, owned by the service's user; the folder 0500), read from `sources[name]` instead
    of the unit's path (a test has no /etc/castline). Returns the folder for $CREDENTIALS_DIRECTORY."""
    import shutil
    os.makedirs(directory, exist_ok=True)
    for name, _ in creds:
        target = os.path.join(directory, name)
        shutil.copyfile(sources[name], target)
        os.chown(target, uid, gid)
        os.chmod(target, 0o400)
    os.chown(directory, uid, gid)
    os.chmod(directory, 0o500)
    return directory


def exec_start_user(unit_text):
    """`User=` if the unit names one, `nobody` for `DynamicUser=yes` (any unprivileged uid will do)."""
    user = re.search(r"^User=(\S+)", unit_text, re.M)
    return user.group(1) if user else ("nobody" if re.search(r"^DynamicUser=yes", unit_text, re.M) else None)


if __name__ == "__main__":
    import json
    import sys
    separator = sys.argv.index("--")
    with open(sys.argv[1]) as f:
        apply(json.load(f))
    argv = sys.argv[separator + 1:]
    os.execv(argv[0], argv)
