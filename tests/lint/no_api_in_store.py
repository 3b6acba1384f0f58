#!/usr/bin/env python3
"""The store keeps its own schema, apart from the API (docs/architecture.md,
"Storage"): no file under server/store/ names a wsched.v1 type or includes
a generated API header, so renaming an API field never changes what is
stored. Stored documents are server/store/documents/; the API mapping is
server/convert/, which the store does not include either.

  tests/lint/no_api_in_store.py SOURCE_DIR

Reads every file under server/store/ and fails listing each line that
mentions `v1::`, `wsched/v1` (a generated header) or `server/convert/`.
"""
import os
import re
import sys

STORE = os.path.join("server", "store")
API = re.compile(r"\bv1::|wsched/v1|server/convert/")


def violations(root):
    for directory, dirs, files in os.walk(os.path.join(root, STORE)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.readlines()
            except UnicodeDecodeError:
                continue  # Not source.
            for number, line in enumerate(lines, 1):
                if API.search(line):
                    yield f"{os.path.relpath(path, root)}:{number}: {line.strip()}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    if not os.path.isdir(os.path.join(root, STORE)):
        sys.exit(f"{STORE} is not a folder under {root}")
    found = list(violations(root))
    for finding in found:
        print(finding)
    print(f"no api in store: {len(found)} mention(s) of the wsched.v1 API under {STORE}/")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
