#!/usr/bin/python3
"""Validates CDI spec files against the CDI project's JSON schema.

  validate_cdi.py SCHEMA_DIR SPEC...

SCHEMA_DIR holds schema.json and defs.json as the CDI project ships them
(Debian: golang-github-container-orchestrated-devices-container-device-interface-dev).
"""
import json
import pathlib
import sys
import warnings

import jsonschema

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: the API both 4.10 and 4.2x have.


def main() -> int:
    schema_dir = pathlib.Path(sys.argv[1]).resolve()
    schema = json.loads((schema_dir / "schema.json").read_text())
    resolver = jsonschema.RefResolver(base_uri=schema_dir.as_uri() + "/", referrer=schema)
    validator = jsonschema.Draft7Validator(schema, resolver=resolver)
    failed = 0
    for path in sys.argv[2:]:
        errors = sorted(validator.iter_errors(json.loads(pathlib.Path(path).read_text())), key=str)
        for error in errors:
            print(f"{path}: {'/'.join(map(str, error.path))}: {error.message}")
        failed += bool(errors)
        if not errors:
            print(f"{path}: valid against the CDI schema")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
