"""Sealing a submission's build with Landlock: the process that compiles a submission
can read only the directories it is given (the staged submission, the toolchain, the
published user sources, the system's libraries) and write only its output and cache
directories. Everything else (the hidden tests, the reference solution, the grader's
checkout, other students' files) is out of reach of the compiler and of everything it
runs, whatever a source names: `#include "/abs/path"`, `.incbin`, `__has_include` and
`-MD` depfiles all go through the same kernel check.

Landlock is the Linux security module for unprivileged sandboxes (Linux 5.13+): the
process builds a ruleset, sets no_new_privs and restricts itself; the restriction is
inherited by every child and cannot be lifted. Called through ctypes (no dependency).
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import PrivlabError

__all__ = ["UNSEALED_ENV", "SandboxError", "SandboxPolicy", "landlock_abi", "restrict_self"]

UNSEALED_ENV = "PRIVLAB_UNSEALED_BUILD"   # "1": build without Landlock (documented escape)

# Generic syscall numbers: the same on x86_64, aarch64 and riscv64.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights (include/uapi/linux/landlock.h) and the ABI that added them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_ABI1 = (EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR
         | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV


def _handled(abi: int) -> int:
    rights = _ABI1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


READ = EXECUTE | READ_FILE | READ_DIR


class SandboxError(PrivlabError):
    """The build cannot be sealed (Landlock missing or refused)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]   # the ABI 1 layout: fs only


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True)
class SandboxPolicy:
    """What the sealed process may touch: `read` trees (read and execute), `write`
    trees (everything: create, write, rename, remove). Paths that do not exist are
    left out (nothing to grant)."""

    read: tuple[Path, ...]
    write: tuple[Path, ...]

    def to_json(self) -> dict[str, list[str]]:
        return {"read": [str(p) for p in self.read], "write": [str(p) for p in self.write]}

    @classmethod
    def from_json(cls, data: dict[str, Sequence[str]]) -> SandboxPolicy:
        return cls(tuple(Path(p) for p in data["read"]), tuple(Path(p) for p in data["write"]))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing (not Linux, an old
    kernel, disabled at boot, or the syscall filtered by a container's seccomp)."""
    if platform.system() != "Linux":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def why_unavailable() -> str:
    """One line on why Landlock cannot be used here."""
    if platform.system() != "Linux":
        return f"Landlock is a Linux feature and this is {platform.system()}"
    return (f"this Linux ({platform.release()}) has no Landlock: the kernel predates 5.13, "
            "`lsm=` leaves landlock out, or a seccomp filter (a container's) blocks "
            "landlock_create_ruleset")


def restrict_self(policy: SandboxPolicy) -> int:
    """Seal this process (and every process it starts) to `policy`. Returns the ABI
    used. Raises SandboxError if the kernel cannot."""
    abi = landlock_abi()
    if abi == 0:
        raise SandboxError(why_unavailable())
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = _handled(abi)
    attr = _RulesetAttr(handled)
    fd = libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr),
                      ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise SandboxError(f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}")
    try:
        grants = [(p, READ) for p in policy.read] + [(p, handled) for p in policy.write]
        for path, rights in grants:
            _add_rule(libc, int(fd), path, rights & handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise SandboxError(f"prctl(PR_SET_NO_NEW_PRIVS) failed: "
                               f"{os.strerror(ctypes.get_errno())}")
        if libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(fd),
                        ctypes.c_uint32(0)) != 0:
            raise SandboxError(f"landlock_restrict_self failed: "
                               f"{os.strerror(ctypes.get_errno())}")
    finally:
        os.close(int(fd))
    return abi


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: Path, rights: int) -> None:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as e:
        raise SandboxError(f"cannot open {path} for the build's sandbox: {e.strerror}") from e
    try:
        if not os.path.isdir(path):
            rights &= _FILE_ONLY
        rule = _PathBeneathAttr(rights, target)
        if libc.syscall(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(ruleset),
                        ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                        ctypes.c_uint32(0)) != 0:
            raise SandboxError(f"landlock_add_rule({path}) failed: "
                               f"{os.strerror(ctypes.get_errno())}")
    finally:
        os.close(target)
