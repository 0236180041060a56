#!/usr/bin/env python3
"""Writes an mkfs.xfs prototype file (mkfs.xfs -p, see xfs_mkfs(8)) describing a directory tree, so
that mkfs.xfs fills the new file system itself and nothing has to be mounted.

Usage: xfs-protofile.py ROOT > proto.txt

The format splits on white space and reads a token starting with ':' as a comment, so entries
whose name or path has white space or starts with ':' are left out (listed on stderr). It has no
sticky bit (systemd-tmpfiles restores /tmp and /var/tmp at boot), no extended attributes and no
hard links (each link becomes a copy). Sockets are left out.
"""
import os
import stat
import sys


def representable(name):
    return name and not name.startswith(":") and not any(c.isspace() for c in name)


def mode_string(st):
    kind = {stat.S_IFREG: "-", stat.S_IFDIR: "d", stat.S_IFLNK: "l", stat.S_IFCHR: "c",
            stat.S_IFBLK: "b", stat.S_IFIFO: "p"}[stat.S_IFMT(st.st_mode)]
    suid = "u" if st.st_mode & stat.S_ISUID else "-"
    sgid = "g" if st.st_mode & stat.S_ISGID else "-"
    return f"{kind}{suid}{sgid}{stat.S_IMODE(st.st_mode) & 0o777:03o}"


def walk(path, depth, out, skipped):
    with os.scandir(path) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            full = os.path.join(path, entry.name)
            st = os.lstat(full)
            fmt = stat.S_IFMT(st.st_mode)
            if fmt == stat.S_IFSOCK or not representable(entry.name) or not representable(full):
                skipped.append(full)
                continue
            if fmt == stat.S_IFLNK and not representable(os.readlink(full)):
                skipped.append(full)
                continue
            head = f"{' ' * depth}{entry.name} {mode_string(st)} {st.st_uid} {st.st_gid}"
            if fmt == stat.S_IFREG:
                out.write(f"{head} {full}\n")
            elif fmt == stat.S_IFLNK:
                out.write(f"{head} {os.readlink(full)}\n")
            elif fmt in (stat.S_IFCHR, stat.S_IFBLK):
                out.write(f"{head} {os.major(st.st_rdev)} {os.minor(st.st_rdev)}\n")
            elif fmt == stat.S_IFIFO:
                out.write(f"{head}\n")
            else:
                out.write(f"{head}\n")
                walk(full, depth + 1, out, skipped)
                out.write(f"{' ' * (depth + 1)}$\n")


def main():
    root = os.path.abspath(sys.argv[1])
    out = sys.stdout
    st = os.lstat(root)
    out.write("/dev/null\n0 0\n")
    out.write(f"{mode_string(st)} {st.st_uid} {st.st_gid}\n")
    skipped = []
    walk(root, 1, out, skipped)
    out.write("$\n")
    for path in skipped:
        print(f"xfs-protofile: left out {path!r}", file=sys.stderr)


main()
