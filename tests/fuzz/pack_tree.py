#!/usr/bin/env python3
"""Packs a fake node tree (tests/sysfs/<name>) into a seed for agent_tree_fuzz.

  pack_tree.py tests/sysfs/h100-8gpu [nvidia-smi.csv] > tests/fuzz/corpus/agent_tree/h100-8gpu

Records: type ('F' file, 'L' symlink, 'S' nvidia-smi output), path length
(1 byte), path, content length (2 bytes, big endian), content.
"""
import os
import struct
import sys


def record(kind, path, content):
    path = path.encode()
    if len(path) > 255 or len(content) > 65535:
        raise SystemExit(f"{path!r}: too long for a record")
    return kind + struct.pack("B", len(path)) + path + struct.pack(">H", len(content)) + content


def main():
    root = sys.argv[1]
    out = bytearray()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                out += record(b"L", rel, os.readlink(full).encode())
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    out += record(b"F", rel, f.read())
    if len(sys.argv) > 2:
        with open(sys.argv[2], "rb") as f:
            out += record(b"S", "", f.read())
    sys.stdout.buffer.write(bytes(out))


if __name__ == "__main__":
    main()
