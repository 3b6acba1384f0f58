#!/usr/bin/env python3
"""docs/api.md documents every RPC the protos define, as the protos are now.

    api_docs_test.py SOURCE_DIR

For each `rpc` of each `service` in api/wsched/v1/*.proto, docs/api.md must
have a section headed `ServiceName.RpcName` (under a `ServiceName` heading)
with
  - a line or two on what it is for, before
  - a `Roles:` line naming exactly the roles of the RPC's entry in the access
    table (server/grpc/auth.cc),
  - an example code block that calls `wsched.v1.ServiceName/RpcName`,
  - for a request with paging fields, `page_size` and `page_token` in the
    example.
A section for an RPC the protos no longer have fails too.
"""
import pathlib
import re
import sys

ROLE_NAMES = {
    "kAdmin": "admin",
    "kControlPlane": "control-plane",
    "kProjectOwner": "project-owner",
    "kAgent": "agent",
    "kActuator": "actuator",
}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def blocks(text, keyword):
    """Top-level `keyword Name { ... }` bodies by name (braces matched)."""
    out = {}
    for m in re.finditer(r"\b%s\s+(\w+)\s*\{" % keyword, text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.setdefault(m.group(1), text[m.end():i - 1])
    return out


def read_protos(src):
    services = {}  # service -> [(rpc, request type)]
    messages = {}
    protos = sorted((src / "api/wsched/v1").glob("*.proto"))
    if not protos:
        sys.exit(f"api_docs_test: no protos under {src / 'api/wsched/v1'}")
    for proto in protos:
        text = strip_comments(proto.read_text())
        messages.update(blocks(text, "message"))
        for service, body in blocks(text, "service").items():
            rpcs = re.findall(r"\brpc\s+(\w+)\s*\(\s*(?:stream\s+)?([\w.]+)\s*\)", body)
            services[service] = rpcs
    return services, messages


def read_access_table(src):
    text = strip_comments((src / "server/grpc/auth.cc").read_text())
    table = {}
    for m in re.finditer(r'\{\s*"/wsched\.v1\.(\w+)/(\w+)"\s*,\s*\{([^}]*)\}\s*\}', text):
        roles = set()
        for role in re.findall(r"R::(\w+)|Role::(\w+)", m.group(3)):
            name = role[0] or role[1]
            roles.add(ROLE_NAMES.get(name, name))
        table[(m.group(1), m.group(2))] = roles
    if not table:
        sys.exit("api_docs_test: found no access table entries in server/grpc/auth.cc")
    return table


def read_sections(doc):
    """`Service.Rpc` heading -> its text; plus the plain service headings."""
    sections, services = {}, set()
    current, lines = None, []
    in_fence = False
    for line in doc.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
        heading = None if in_fence else re.match(r"^(#{2,4})\s+`?([\w.]+)`?\s*$", line)
        if heading or (not in_fence and re.match(r"^#{1,4}\s", line)):
            if current:
                sections[current] = "\n".join(lines)
            current, lines = None, []
            if heading:
                name = heading.group(2)
                if re.fullmatch(r"\w+Service\.\w+", name):
                    if name in sections:
                        sections[name + " (again)"] = ""
                    current = name
                elif re.fullmatch(r"\w+Service", name):
                    services.add(name)
            continue
        if current:
            lines.append(line)
    if current:
        sections[current] = "\n".join(lines)
    return sections, services


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: api_docs_test.py SOURCE_DIR")
    src = pathlib.Path(sys.argv[1])
    services, messages = read_protos(src)
    access = read_access_table(src)
    sections, service_headings = read_sections((src / "docs/api.md").read_text())
    errors = []
    checked = 0
    for service, rpcs in sorted(services.items()):
        if service not in service_headings:
            errors.append(f"no `### {service}` heading")
        for rpc, request in rpcs:
            name = f"{service}.{rpc}"
            checked += 1
            text = sections.get(name)
            if text is None:
                errors.append(f"{name}: no section (a `#### {name}` heading with purpose, roles, example)")
                continue
            if f"{name} (again)" in sections:
                errors.append(f"{name}: two sections")
            roles_line = re.search(r"^Roles:(.*)$", text, re.M)
            want = access.get((service, rpc))
            if want is None:
                errors.append(f"{name}: not in the access table of server/grpc/auth.cc")
            elif not roles_line:
                errors.append(f"{name}: no `Roles:` line")
            else:
                got = set(re.findall(r"`([\w-]+)`", roles_line.group(1)))
                if got != want:
                    errors.append(f"{name}: Roles: says {sorted(got)}, the access table {sorted(want)}")
            code = "\n".join(re.findall(r"```[\w-]*\n(.*?)```", text, re.S))
            if f"wsched.v1.{service}/{rpc}" not in code:
                errors.append(f"{name}: no example that calls wsched.v1.{service}/{rpc}")
            fields = messages.get(request.split(".")[-1], "")
            for paging in ("page_size", "page_token"):
                if re.search(r"\b%s\s*=" % paging, fields) and paging not in code:
                    errors.append(f"{name}: the request pages but the example has no {paging}")
            if roles_line and not text[:roles_line.start()].strip():
                errors.append(f"{name}: no purpose before the Roles: line")
    known = {f"{s}.{r}" for s, rpcs in services.items() for r, _ in rpcs}
    for name in sorted(sections):
        if name.endswith(" (again)"):
            continue
        if name not in known:
            errors.append(f"{name}: documented, but no proto defines it")
    for e in errors:
        print(f"docs/api.md: {e}", file=sys.stderr)
    print(f"api_docs_test: {checked} RPCs of {len(services)} services checked, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
