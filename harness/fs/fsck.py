"""`check(image)`: everything inconsistent in a file-system image, one Finding each.

An empty list means the image is consistent: the kernel may mount it and every rule
below holds. Each finding has a `code` (what kind of rule it breaks) and a one-line
`message` naming the inode (with its path when one is known) or blocks:

    superblock     the magic number is right but the regions do not fit (nothing else
                   is checked: every other rule reads through them)
    log-header     the log header cannot be installed (n > LOGBLOCKS or than the log,
                   a home block outside the disk)
    log-committed  the log holds a committed transaction; with `replay` (the default)
                   the rest is checked on the image as recovery leaves it (replay_log)
    root           inode ROOTINO is not a directory
    inode-type     an allocated inode of a type no kernel writes
    dir-size       a directory's size is not whole DIRENT_SIZE entries
    dir-dot        a directory's first two entries are not "." (itself) and ".." (its
                   parent; the root's is itself)
    dir-entry      an entry naming no inode, a free inode, "." or ".." elsewhere, an
                   empty name, a name twice in one directory
    dir-link       a directory named by more than one entry (or the root by any)
    block-range    an inode holds a block number outside the data region
    block-twice    one block held twice (by two inodes, or twice by one)
    size           a size past MAXFILE; blocks the size needs that are missing; blocks
                   (or indirect blocks) past what the size needs
    nlink          nlink differs from the entries naming the inode (a directory: 1,
                   its parent's entry, whatever "." and its children's ".." say)
    orphan         an allocated inode no directory names
    bitmap-free    blocks in use (metadata, or held by an allocated inode) that the
                   bitmap marks free
    bitmap-unused  blocks the bitmap marks in use that nothing uses

An orphan's blocks count as in use (they are its own until it is freed), so one
corruption gives one finding where it can.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..abi.fs_layout import BSIZE, DIRENT_SIZE, MAXFILE, ROOTINO
from .image import DiskImage, FileBlocks
from .log import header_problems, replay_log
from .mkfs import blocks_for
from .records import TYPE_NAMES, DirEntry, Inode
from .runs import format_runs

__all__ = ["Finding", "check", "replay_log"]

RANGES_SHOWN = 8


@dataclass(frozen=True)
class Finding:
    """One broken rule: its kind (`code`, see the module) and a one-line message."""

    code: str
    message: str

    def __str__(self) -> str:
        return self.message


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _blocks(blocks: list[int]) -> str:
    if len(blocks) == 1:
        return f"block {blocks[0]}"
    return f"blocks {format_runs(blocks, RANGES_SHOWN)}"


class _Checker:
    def __init__(self, img: DiskImage) -> None:
        self.img = img
        self.sb = img.superblock
        self.out: list[Finding] = []
        self.inodes = {ino.inum: ino for ino in img.inodes() if not ino.is_free}
        self.paths: dict[int, str] = {}       # inum -> the first path naming it
        self.refs: Counter[int] = Counter()   # entries naming each inode ("." and ".." not)
        self.reached: set[int] = set()

    def add(self, code: str, message: str) -> None:
        self.out.append(Finding(code, message))

    def who(self, inum: int) -> str:
        path = self.paths.get(inum)
        return f"inode {inum} ({path})" if path else f"inode {inum}"

    def run(self) -> list[Finding]:
        for ino in self.inodes.values():
            if ino.type not in TYPE_NAMES:
                self.add("inode-type", f"inode {ino.inum} has type {ino.type} "
                                       "(not a directory, file or device)")
        root = self.inodes.get(ROOTINO)
        if root is None or not root.is_dir:
            what = "free" if root is None else f"a {root.type_name}"
            self.add("root", f"the root inode {ROOTINO} is {what}, not a directory")
            return self.out
        self.walk(root)
        owners = self.blocks()
        self.links()
        self.orphans()
        self.bitmap(owners)
        return self.out

    # -- the tree ------------------------------------------------------------------------
    def walk(self, root: Inode) -> None:
        self.paths[ROOTINO] = "/"
        self.reached.add(ROOTINO)
        todo = [(root, "/", ROOTINO)]
        while todo:
            directory, path, parent = todo.pop()
            found = self.directory(directory, path, parent)
            todo += reversed(found)          # depth first, in each directory's order

    def directory(self, d: Inode, path: str, parent: int) -> list[tuple[Inode, str, int]]:
        """Check one directory; return its subdirectories to visit."""
        where = f"directory {self.who(d.inum)}"
        if d.size % DIRENT_SIZE:
            self.add("dir-size", f"{where}: size {d.size} is not a multiple of {DIRENT_SIZE}")
        entries = self.img.entries(d, strict=False)
        if len(entries) < 2:
            self.add("dir-dot", f"{where}: has {len(entries)} entries; it needs '.' and '..'")
        names: set[bytes] = set()
        below: list[tuple[Inode, str, int]] = []
        for index, e in enumerate(entries):
            if index < 2 and self.dot(where, index, e, d.inum if index == 0 else parent):
                continue
            if e.inum == 0:
                continue
            if e.raw in (b".", b".."):
                self.add("dir-entry", f"{where}: another '{e.name}' entry at offset {e.offset}")
                continue
            if not e.raw:
                self.add("dir-entry", f"{where}: an entry with an empty name at offset "
                                      f"{e.offset}")
            elif e.raw in names:
                self.add("dir-entry", f"{where}: the name '{e.name}' appears twice")
            names.add(e.raw)
            sub = self.entry(where, path, e)
            if sub is not None:
                below.append((sub, f"{path}{e.name}/", d.inum))
        return below

    def dot(self, where: str, index: int, e: DirEntry, expected: int) -> bool:
        """Check entry 0 ('.') or 1 ('..'); False if it is another name (an entry)."""
        name = (b".", b"..")[index]
        if e.raw != name:
            self.add("dir-dot", f"{where}: entry {index} is '{e.name}', not "
                                f"'{name.decode()}'")
            return False
        if e.inum != expected:
            whom = "itself" if index == 0 else "its parent"
            self.add("dir-dot", f"{where}: '{name.decode()}' names inode {e.inum}, not "
                                f"{whom} ({expected})")
        return True

    def entry(self, where: str, path: str, e: DirEntry) -> Inode | None:
        """Count one entry's reference; return the directory it names, to visit."""
        if not 1 <= e.inum < self.sb.ninodes:
            self.add("dir-entry", f"{where}: '{e.name}' names inode {e.inum}, outside the "
                                  f"inode table (1-{self.sb.ninodes - 1})")
            return None
        child = self.inodes.get(e.inum)
        if child is None:
            self.add("dir-entry", f"{where}: '{e.name}' names inode {e.inum}, which is free")
            return None
        self.refs[e.inum] += 1
        self.paths.setdefault(e.inum, path + e.name)
        if child.is_dir and e.inum in self.reached:
            self.add("dir-link", f"directory {self.who(e.inum)} is named again, by "
                                 f"{path}{e.name}")
            return None
        self.reached.add(e.inum)
        return child if child.is_dir else None

    # -- blocks --------------------------------------------------------------------------
    def blocks(self) -> dict[int, int]:
        """Check every allocated inode's blocks; return block -> the inode holding it."""
        data = self.sb.data
        owners: dict[int, int] = {}
        for inum in sorted(self.inodes):
            ino = self.inodes[inum]
            fb = self.img.blocks(ino)
            for b in fb.all:
                if b not in data:
                    self.add("block-range", f"{self.who(inum)} holds block {b}, outside the "
                                            f"data region ({data.start}-{data.end - 1})")
                elif b in owners:
                    other = owners[b]
                    by = "twice by " + self.who(inum) if other == inum else \
                        f"by {self.who(other)} and by {self.who(inum)}"
                    self.add("block-twice", f"block {b} is held {by}")
                else:
                    owners[b] = inum
            self.size(ino, fb)
        return owners

    def size(self, ino: Inode, fb: FileBlocks) -> None:
        who = self.who(ino.inum)
        if ino.size > MAXFILE * BSIZE:
            self.add("size", f"{who}: size {ino.size} is more than the largest file "
                             f"({MAXFILE} blocks)")
            return
        need = -(-ino.size // BSIZE)
        present = {i for i, _ in fb.data}
        missing = [i for i in range(need) if i not in present]
        if missing:
            are = "is" if len(missing) == 1 else "are"
            self.add("size", f"{who}: size {ino.size} needs {need} blocks but "
                             f"{len(missing)} {are} missing (the first: file block {missing[0]})")
        beyond = sorted(i for i in present if i >= need)
        if beyond:
            self.add("size", f"{who}: holds {_count(len(beyond), 'block')} past its size "
                             f"{ino.size} (the first: file block {beyond[0]})")
        mapping = blocks_for(ino.size) - need
        if len(fb.mapping) > mapping:
            self.add("size", f"{who}: holds {_count(len(fb.mapping), 'indirect block')}; its "
                             f"size {ino.size} needs {mapping}")

    # -- counts --------------------------------------------------------------------------
    def links(self) -> None:
        for inum in sorted(self.reached):
            ino = self.inodes[inum]
            if ino.is_dir:
                if ino.nlink != 1:
                    self.add("nlink", f"{self.who(inum)}: nlink is {ino.nlink}; a directory's "
                                      "is 1 (the entry in its parent)")
            elif ino.nlink != self.refs[inum]:
                n = self.refs[inum]
                self.add("nlink", f"{self.who(inum)}: nlink is {ino.nlink} but {n} directory "
                                  f"{'entry names' if n == 1 else 'entries name'} it")

    def orphans(self) -> None:
        for inum in sorted(set(self.inodes) - self.reached):
            ino = self.inodes[inum]
            self.add("orphan", f"inode {inum} ({ino.type_name}, {ino.size} bytes, nlink "
                               f"{ino.nlink}) is allocated but no directory names it")

    def bitmap(self, owners: dict[int, int]) -> None:
        used = set(range(self.sb.datastart)) | set(owners)
        marked = {b for b in range(self.sb.size) if self.img.bitmap_says_used(b)}
        free = sorted(used - marked)
        if free:
            are = "is" if len(free) == 1 else "are"
            self.add("bitmap-free", f"{_blocks(free)} {are} in use but free in the bitmap")
        unused = sorted(marked - used)
        if unused:
            them = "it" if len(unused) == 1 else "them"
            self.add("bitmap-unused", f"the bitmap marks {_blocks(unused)} in use, but "
                                      f"nothing uses {them}")


def check(image: bytes | DiskImage, *, replay: bool = True) -> list[Finding]:
    """The findings on `image` ([]: consistent). With `replay`, a committed log is
    reported and the rest is checked as the kernel sees the disk after recovery.
    BadInput if it is not a file-system image at all (too short, wrong magic)."""
    img = image if isinstance(image, DiskImage) else DiskImage(image, strict=False)
    if img.problems:
        return [Finding("superblock", p) for p in img.problems]
    out: list[Finding] = []
    header = img.log_header()
    problems = header_problems(img, header)
    out += [Finding("log-header", p) for p in problems]
    if not problems and header.n:
        out.append(Finding("log-committed", f"the log holds a committed transaction of "
                           f"{header.n} blocks (recovery would install it)"))
        if replay:
            img = DiskImage(replay_log(img), img.name, strict=False)
    return out + _Checker(img).run()
