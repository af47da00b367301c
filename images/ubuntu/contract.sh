#!/bin/bash
# The image contract (docs/executors.md, "The local image"): what a build may count on in Conveyor's Ubuntu images.
# Run as a build job's script inside the image; prints one line per promise and exits non-zero if one is broken.
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
for missing in pwsh nvm; do
	if command -v "$missing" >/dev/null 2>&1; then echo "CONTRACT extra: $missing"; else echo "CONTRACT lacks: $missing"; fi
done
exit $failed
