#!/bin/bash
# The image contract (docs/executors.md, "The local image"): what a build may count on in Conveyor's Ubuntu images.
# Run as a build job's script inside the image (`source contract.sh`: nvm is a function of the job's session); prints
# one line per promise, and fails (its exit status, or return when sourced) if one is broken.
failed=0
check() {  # check "what is promised" command...
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "CONTRACT ok: $what"; else echo "CONTRACT BROKEN: $what"; failed=1; fi
}
check "bash runs the scripts" test -n "$BASH_VERSION"
check "the user is appveyor" test "$(id -un)" = appveyor
check "sudo without a password" sudo -n true
check "sudo makes root" test "$(sudo -n id -u)" = 0
check "git" git --version
check "curl" curl --version
check "ca-certificates" test -s /etc/ssl/certs/ca-certificates.crt
check "python3" python3 --version
check "python3 -m venv" python3 -m venv "${TMPDIR:-/tmp}/contract-venv"
check "a C toolchain (gcc, make)" sh -c 'printf "int main(void){return 0;}" > /tmp/contract.c && gcc -o /tmp/contract /tmp/contract.c && /tmp/contract && make --version'
check "the appveyor command on PATH" command -v appveyor
check "APPVEYOR_BUILD_FOLDER is /home/appveyor/projects/<slug>" test "$APPVEYOR_BUILD_FOLDER" = "/home/appveyor/projects/$APPVEYOR_PROJECT_SLUG"
check "the build folder is the current folder" test "$PWD" = "$APPVEYOR_BUILD_FOLDER"
check "HOME is /home/appveyor" test "$HOME" = /home/appveyor
version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
check "\$HOME/venv$version for the image's python3" test -x "$HOME/venv$version/bin/python"
check "the appveyor command reaches the Build Worker API" appveyor AddMessage "The image contract was checked"
check "APPVEYOR_API_URL answers curl" sh -c 'curl -sf -X POST -H "Content-Type: application/json" -d "{\"message\": \"curl reached it\"}" "${APPVEYOR_API_URL}api/build/messages"'
printf '<testsuite name="contract" tests="1"><testcase classname="image" name="contract_results_upload" time="0.01"/></testsuite>' > /tmp/contract-results.xml
check "test results reach the Build Worker API (curl -F file=@...)" curl -sf -F "file=@/tmp/contract-results.xml" "${APPVEYOR_API_URL}api/testresults/junit/$APPVEYOR_JOB_ID"
check "LANG is C.UTF-8" test "$LANG" = C.UTF-8
check "CI and APPVEYOR are true" test "${CI,,}/${APPVEYOR,,}" = true/true
# the tools of AppVeyor's Ubuntu image that Debian's registry holds, under the names configurations call
for tool in yarn cmake ninja 7z 7za clang clang-13 clang-14 clang-15 clang-16 gcc-11 g++-11 gcc-12 g++-12 java \
	javac go ruby gem bundle virtualenv jq wget gpg lsb_release add-apt-repository hg svn git-lfs mono mcs erl \
	doxygen tclsh gradle mvn ant zip unzip xz aws az psql mariadb mysql redis-cli rabbitmqctl pkg-config; do
	check "$tool on PATH" command -v "$tool"
done
check "JAVA_HOME is a JDK" test -x "$JAVA_HOME/bin/javac"
check "clang-16 compiles C" sh -c 'printf "int main(void){return 0;}" > /tmp/contract16.c && clang-16 -o /tmp/contract16 /tmp/contract16.c && /tmp/contract16'
check "nvm is the session's" test "$(type -t nvm)" = function
check "node is Node.js 22 by default" sh -c 'node --version | grep -q "^v22\."'
for major in 14 15 16 17 18 19 20 21 22 23 24; do
	check "Node.js $major with npm (nvm use $major)" sh -c "$(nvm which "$major") --version | grep -q '^v$major\.' && test -x $(dirname "$(nvm which "$major")")/npm"
done
check "yarn runs" yarn --version
check "go builds" sh -c 'cd /tmp && printf "package main\nfunc main() {}\n" > contract.go && go build -o contract-go contract.go'
for service in postgresql mariadb-server redis-server rabbitmq-server; do
	check "$service installed (services: starts it)" test -n "$(dpkg-query -W -f '${Status}' "$service" 2>/dev/null | grep ' installed')"
done
for missing in pwsh dotnet docker; do
	if command -v "$missing" >/dev/null 2>&1; then echo "CONTRACT extra: $missing"; else echo "CONTRACT lacks: $missing"; fi
done
(return 0 2>/dev/null) && return $failed
exit $failed
