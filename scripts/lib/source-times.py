#!/usr/bin/env python3
"""scripts/lib/source-times.py TREE RECORD

Gives each tracked file of the git work tree TREE the modification time it
had in the previous run, when its content is the same as then; a file that
changed keeps the time the clone gave it (now). RECORD (a text file, created
when missing) holds each file's path, blob and time, and is rewritten for the
next run.

Why: a fresh clone makes every file newer than anything built before, so a
cached build directory (make, ninja, cargo) compiles everything again: all of
transcribe.cpp, ggml's Vulkan shaders. With the times of unchanged files kept,
those builds redo only what depends on a changed file. The decision rests on
git's blob ids, not on commit dates, so checking out an older commit after a
newer one cannot leave a stale object behind: a file whose content is not the
one the cached build last saw is newer than everything it built.
"""
import os
import subprocess
import sys

REGULAR_FILES = (b"100644", b"100755")


def tracked_files(tree):
    """(path, blob) of each regular file git tracks in TREE."""
    listing = subprocess.run(
        ["git", "-C", tree, "ls-files", "--stage", "-z"],
        capture_output=True,
        check=True,
    ).stdout
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, blob, _stage = meta.split(b" ")
        if mode in REGULAR_FILES:
            yield os.fsdecode(path), blob.decode()


def read_record(record):
    """{path: (blob, mtime_ns)} from the previous run, or {}."""
    known = {}
    try:
        with open(record, encoding="utf-8") as f:
            for line in f:
                blob, mtime, path = line.rstrip("\n").split(" ", 2)
                known[path] = (blob, int(mtime))
    except FileNotFoundError:
        pass
    return known


def main(tree, record):
    known = read_record(record)
    kept = changed = 0
    lines = []
    for path, blob in tracked_files(tree):
        full = os.path.join(tree, path)
        before = known.get(path)
        if before and before[0] == blob:
            os.utime(full, ns=(before[1], before[1]))
            kept += 1
        else:
            changed += 1
        lines.append(f"{blob} {os.stat(full).st_mtime_ns} {path}\n")
    tmp = record + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(tmp, record)
    print(f"source-times: {kept} files as in the last run, {changed} new or changed")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[0])
    main(sys.argv[1], sys.argv[2])
