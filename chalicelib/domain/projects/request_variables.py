"""A start request's ``environmentVariables``: the names refused from it, and when a build started with them gets
no secure variables.

Whoever may run a project's builds may pass variables to them; that is not the right to read its secure
variables, nor to change its scripts. Two rules keep it so (issue 34, finding 3):

- Names that make a program run code of the caller's choosing when it starts (a shell's startup file, an
  interpreter's options, the dynamic loader, git's configuration) are refused from every start request, whoever
  sends it: a 400 that names them, and nothing starts.
- A build started with variables by a caller who may not update the project's settings is shaped by someone who
  may not see its secrets: as a pull request's build, it decrypts no secure variable, saves no cache (a later
  build would restore what it made), runs no inline deployment (its artifacts would go out with the project's
  secure deploy settings), keeps its version and runs on no build agent that takes no pull requests; its log says
  so once.
"""

from __future__ import annotations

from collections.abc import Iterable

from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.domain.team.access import Right, has_right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Invalid

# Refused whatever their case: a Windows build's environment is case-insensitive, and no build needs "Path" from a
# start request. Each name, and why it is refused.
REFUSED_NAMES: dict[str, str] = {
    "BASH_ENV": "bash sources the file it names before every non-interactive script",
    "ENV": "sh, dash and ksh (and bash as sh) source the file it names",
    "SHELLOPTS": "turns on bash's options, xtrace among them (which runs PS4's command substitutions)",
    "BASHOPTS": "turns on bash's shopt options in every script",
    "PS4": "bash expands it, command substitutions included, before each traced command",
    "PROMPT_COMMAND": "bash runs it before each prompt",
    "PATH": "decides which program every command name runs",
    "HOME": "every tool reads its dotfiles there (.bashrc, .gitconfig, .npmrc, .pypirc)",
    "XDG_CONFIG_HOME": "git and others read their configuration there",
    "ZDOTDIR": "zsh reads its startup files there",
    "NODE_OPTIONS": "node takes --require and --import from it: a module run before the build's own",
    "NODE_PATH": "node resolves the build's require() calls there first",
    "PERL5OPT": "perl takes -M from it: a module run before the build's own",
    "PERL5LIB": "perl loads the build's modules from there first",
    "PERLLIB": "perl loads the build's modules from there first",
    "PERL5DB": "perl runs it as its debugger",
    "PYTHONSTARTUP": "python runs the file it names",
    "PYTHONPATH": "python imports from there first (a sitecustomize.py there runs at every start)",
    "PYTHONHOME": "python takes its standard library from there",
    "PYTHONWARNINGS": "python imports the warning category's module it names",
    "PYTHONBREAKPOINT": "python imports and calls what it names at breakpoint()",
    "PYTHONUSERBASE": "python adds its site-packages (and their .pth files, which run code) to every start",
    "RUBYOPT": "ruby takes -r from it: a library run before the build's own",
    "RUBYLIB": "ruby loads the build's libraries from there first",
    "JAVA_TOOL_OPTIONS": "every JVM takes -javaagent from it",
    "_JAVA_OPTIONS": "every JVM takes -javaagent from it",
    "JDK_JAVA_OPTIONS": "the java launcher takes -javaagent from it",
    "DOTNET_STARTUP_HOOKS": ".NET runs the assemblies it names before Main",
    "DOTNET_ADDITIONAL_DEPS": ".NET loads the assemblies it names",
    "PHPRC": "php reads its php.ini there (auto_prepend_file runs a file first)",
    "PHP_INI_SCAN_DIR": "php reads more .ini files there (auto_prepend_file runs a file first)",
    "OPENSSL_CONF": "OpenSSL's configuration loads engines (shared objects) it names",
    "OPENSSL_ENGINES": "OpenSSL loads engines from there",
    "GCONV_PATH": "glibc loads character-set modules (shared objects) from there",
    "LESSOPEN": "less runs it on every file it shows",
    "EDITOR": "git and others run it",
    "VISUAL": "git and others run it",
    "PAGER": "git and others run it",
    "SSH_ASKPASS": "ssh runs it for a password",
}
REFUSED_PREFIXES: dict[str, str] = {
    "LD_": "the dynamic loader's: LD_PRELOAD and LD_AUDIT load a shared object into every program, "
    "LD_LIBRARY_PATH swaps its libraries",
    "DYLD_": "macOS's dynamic loader's, as LD_ on Linux",
    "BASH_FUNC_": "an exported bash function: it replaces the command of its name in every script",
    "GIT_": "git's own (GIT_CONFIG_COUNT/KEY/VALUE and GIT_CONFIG_PARAMETERS set any configuration, core.sshCommand "
    "and core.fsmonitor run programs; GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EXEC_PATH, GIT_DIR, GIT_TEMPLATE_DIR run "
    "or swap what git runs)",
    "NPM_CONFIG_": "npm's configuration (script-shell, node-options, userconfig run programs of the caller's)",
    "CORECLR_": ".NET's profiler: CORECLR_PROFILER_PATH loads a library into every .NET program",
    "COR_PROFILER": ".NET Framework's profiler, as CORECLR_",
}
UNTRUSTED_FLAG = "untrustedVariables"  # the build's flag: its request variables came from such a caller
WITHHELD_NOTICE = (
    "As for a pull request's build, secure variables are not decrypted, the build cache is not saved, inline "
    "deployments do not run and the version stays: this build was started with environment variables by someone "
    "who may not change the project's settings."
)


def refused_names(variables: Iterable[str]) -> list[str]:
    """The names among ``variables`` no start request may set, in the order given."""
    return [name for name in variables if _refused(name.upper())]


def check_request_variables(variables: Iterable[str]) -> None:
    """Refuse (400, naming them) variables no start request may set."""
    refused = refused_names(variables)
    if refused:
        raise Invalid(
            f"environmentVariables may not set {', '.join(refused)}: a start request's variables may not change how "
            "the build's programs start (shell startup files, interpreter options, the dynamic loader, git's "
            "configuration, PATH or HOME). Set them in the project's settings or in appveyor.yml instead."
        )


def untrusted(caller: Caller, project: Project, variables: dict[str, str]) -> bool:
    """Whether a build started by ``caller`` with ``variables`` gets its secrets withheld."""
    return bool(variables) and not has_right(caller, project, Right.UPDATE)


def withholds_secrets(build: Build) -> bool:
    """Whether the build decrypts no secure variable and saves no cache: a pull request's, or one started with
    variables by a caller who may not update the project's settings (builds stored before say neither)."""
    return why_untrusted(build) is not None


def why_untrusted(build: Build) -> str | None:
    """Why the build is treated as code of someone who may not change the project (as messages say it), or None:
    a pull request's, or one started with variables by a caller who may not update the project's settings."""
    if build.pull_request is not None:
        return "it is a pull request's build"
    if build.flags.get(UNTRUSTED_FLAG):
        return "it was started with environment variables by someone who may not change the project's settings"
    return None


def _refused(name: str) -> bool:
    return name in REFUSED_NAMES or any(name.startswith(prefix) for prefix in REFUSED_PREFIXES)
