"""``secure:`` values, one rule everywhere (issue 43): POST /api/account/encrypt makes a value that decrypts in builds
of the caller's account's projects (of one project, with ``projectSlug``) and nowhere else; a value Conveyor cannot
decrypt (AppVeyor's own, encrypted with its account's key) never becomes a variable's value: settings YAML refuses
it (400), a repository's appveyor.yml leaves the variable unset and says so in the build's messages and its log."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from chalice.test import Client

from chalicelib.api import encrypted_values as encrypted_value_views
from chalicelib.domain.projects.encrypted_settings import bound_encrypted_values
from chalicelib.domain.shared import secrets
from chalicelib.errors import Invalid
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import ARTIFACTS_YML
from tests.functional.test_inline_deployments import build_deployments, ftp_entry, job_log
from tests.functional.test_notification_secrets import messages_of
from tests.functional.test_project_settings import branch_project, built_log
from tests.gitserver import GitServer
from tests.peers import FtpServer, WebhookReceiver
from tests.support import Account, Caller, Reply, add_project, new_account, project_path, request_of

PLAIN = "conda-upload-token-1234"
SPREAD = "c-o-n-d-a---u-p-l-o-a-d"  # what `sed 's/./&-/g'` makes of it: masking cannot catch that
# A value as AppVeyor's "Encrypt YAML" page gives it: the base64 of whole AES blocks, of a key Conveyor has not
APPVEYOR_VALUE = base64.b64encode(os.urandom(48)).decode()


def encrypt(caller: Caller, body: Any) -> Reply:
    return caller.post("/account/encrypt", body)


def encrypted(caller: Caller, plain: str = PLAIN, **fields: str) -> str:
    reply = encrypt(caller, {"plainValue": plain, **fields})
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"].startswith("text/plain")
    assert plain not in reply.body.decode()
    return reply.body.decode()


def printing(value: str) -> str:
    """An appveyor.yml whose TOKEN is ``secure: value``, and which prints it spread out (or says it is unset)."""
    return appveyor_yml(
        "environment:",
        "  TOKEN:",
        f"    secure: {value}",
        "build_script:",
        "  - echo \"TOKEN=${TOKEN:-unset}\" | sed 's/./&-/g'",
    )


@pytest.fixture
def build_project(git_server: GitServer, pump: SqsPump):  # type: ignore[no-untyped-def]
    def make(account: Account, yml: str) -> BuildProject:
        return BuildProject(account, git_server, {"appveyor.yml": yml})

    return make


def ran(project: BuildProject) -> tuple[dict[str, Any], str]:
    build = project.run()
    return build, project.log(build["jobs"][0]["jobId"])


def test_a_value_encrypted_for_the_account_decrypts_in_a_build_of_its_project(
    account: Account,
    build_project,  # type: ignore[no-untyped-def]
) -> None:
    project = build_project(account, printing(encrypted(account.api)))

    build, log = ran(project)

    assert build["status"] == "success", log
    assert SPREAD in log
    assert PLAIN not in log  # masked where it is printed whole


def test_a_value_encrypted_for_account_a_does_not_decrypt_in_account_bs_build(
    account: Account,
    client: Client,
    build_project,  # type: ignore[no-untyped-def]
) -> None:
    """The attack: a value of account A (copied from A's public appveyor.yml, say) into a project of account B, whose
    builds B's members write: it must not decrypt there."""
    other = new_account(client)
    project = build_project(other, printing(encrypted(account.api)))

    build, log = ran(project)

    assert SPREAD not in log and "T-O-K-E-N-=-u-n-s-e-t" in log, log
    said = "Secure variable TOKEN is not set: A secure value is not a secret of this project's variable TOKEN"
    assert said in log
    assert "encrypted for another account or project" in log
    assert any(said in message["message"] for message in build["messages"]), build["messages"]


def test_a_value_encrypted_for_project_p_decrypts_in_p_and_not_in_p2(
    account: Account,
    build_project,  # type: ignore[no-untyped-def]
) -> None:
    project = build_project(account, printing("placeholder"))
    value = encrypted(account.api, projectSlug=project.project["slug"])
    assert value.startswith("cvyp:")
    project.repository.commit({"appveyor.yml": printing(value)})
    elsewhere = build_project(account, printing(value))

    (_, log), (_, log_elsewhere) = ran(project), ran(elsewhere)

    assert SPREAD in log
    assert SPREAD not in log_elsewhere and "T-O-K-E-N-=-u-n-s-e-t" in log_elsewhere
    assert "Secure variable TOKEN is not set" in log_elsewhere


def test_an_appveyor_value_leaves_its_variable_unset_and_says_so_after_build_started(
    account: Account,
    build_project,  # type: ignore[no-untyped-def]
) -> None:
    project = build_project(account, printing(APPVEYOR_VALUE))

    build, log = ran(project)

    assert "T-O-K-E-N-=-u-n-s-e-t" in log, log
    assert APPVEYOR_VALUE not in log.replace("\n", "")
    said = "Secure variable TOKEN is not set: its value is not one Conveyor can decrypt (encrypted by AppVeyor, say)."
    assert log.index("Build started") < log.index(said), log
    assert "POST /api/account/encrypt" in log
    (message,) = [message for message in build["messages"] if said in message["message"]]
    assert message["category"] == "warning" and "POST /api/account/encrypt" in message["message"]


def put_yaml(account: Account, project: dict[str, Any], text: str) -> Reply:
    path = project_path(project) + "/settings/yaml"
    return account.api.put(path, raw=text.encode(), headers={"Content-Type": "text/plain"})


def read_yaml(account: Account, project: dict[str, Any]) -> str:
    return account.api.get(project_path(project) + "/settings/yaml").body.decode()


@pytest.mark.parametrize("form", ["one configuration", "a list of configurations"])
def test_settings_yaml_refuses_an_appveyor_value_naming_the_variable(account: Account, form: str) -> None:
    project = add_project(account)
    before = read_yaml(account, project)
    text = f"environment:\n  PUBLISH_KEY:\n    secure: {APPVEYOR_VALUE}\n"
    if form == "a list of configurations":
        text = f"- branches:\n    only: [main]\n  environment:\n    PUBLISH_KEY:\n      secure: {APPVEYOR_VALUE}\n"

    reply = put_yaml(account, project, text)

    assert reply.status == 400, reply.body
    message = reply.json["message"]
    assert "environment.PUBLISH_KEY" in message and "not one Conveyor can decrypt" in message, message
    assert "plain text" not in message
    assert 'POST /api/account/encrypt with {"plainValue": "..."}' in message
    assert read_yaml(account, project) == before


def test_settings_yaml_takes_an_encrypted_value_as_the_variables_own_token(account: Account) -> None:
    project = add_project(account)
    value = encrypted(account.api, projectSlug=project["slug"])

    assert put_yaml(account, project, f"environment:\n  PUBLISH_KEY:\n    secure: {value}\n").status == 204

    stored = yaml.safe_load(read_yaml(account, project))["environment"]["PUBLISH_KEY"]["secure"]
    assert stored.startswith("cvy2:") and stored != value
    listed = f"- branches:\n    only: [main]\n  environment:\n    PUBLISH_KEY:\n      secure: {value}\n"
    assert put_yaml(account, project, listed).status == 204  # kept as written, the value as its variable's token
    elsewhere = add_project(account)
    refused = put_yaml(account, elsewhere, listed)
    assert refused.status == 400 and "encrypted for another account or project" in refused.json["message"]


def test_a_form_body_as_conda_smithy_sends_it_is_encrypted(account: Account) -> None:
    reply = account.api.call(
        "POST",
        "/account/encrypt",
        raw=f"plainValue={PLAIN}".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )

    assert reply.status == 200, reply.body
    assert reply.body.decode().startswith("cvya:")


@pytest.mark.parametrize(
    ("body", "content_type", "status", "said"),
    [
        (b"", "application/json", 400, "A JSON request body is required"),
        (b"{not json", "application/json", 400, "not valid JSON"),
        (b"[]", "application/json", 400, "must be a JSON object"),
        (b"{}", "application/json", 400, "plainValue is required"),
        (b'{"plainValue": 42}', "application/json", 400, "plainValue must be a string"),
        (b'{"plainValue": " a "}', "application/json", 400, "at least 3 characters"),
        (b'{"plainValue": "' + b"x" * 5000 + b'"}', "application/json", 400, "at most 4096 bytes"),
        (b'{"plainValue": "secret", "projectSlug": 7}', "application/json", 400, "projectSlug must be a string"),
        (b'{"plainValue": "secret", "projectSlug": "no-such-project"}', "application/json", 404, "not found"),
        (b"plainValue=one&plainValue=two", "application/x-www-form-urlencoded", 400, "sent more than once"),
        (b"projectSlug=x", "application/x-www-form-urlencoded", 400, "plainValue is required"),
        (b"plainValue", "application/x-www-form-urlencoded", 400, "not a form"),
        (b'{"plainValue": "ab\\ud800cd"}', "application/json", 400, "plainValue is not valid Unicode text"),
        (b'{"plainValue": "secret", "projectSlug": "p\\udfffq"}', "application/json", 400, "projectSlug is not valid"),
        (b"plainValue=ab%ED%A0%80cd", "application/x-www-form-urlencoded", 400, "plainValue is not valid Unicode"),
    ],
)
def test_a_bad_encrypt_request_is_a_4xx_saying_why(
    account: Account, body: bytes, content_type: str, status: int, said: str
) -> None:
    reply = account.api.call("POST", "/account/encrypt", raw=body, headers={"Content-Type": content_type})

    assert reply.status == status, reply.body
    assert said in reply.json["message"], reply.json


def test_a_project_of_another_account_is_not_found_and_no_key_is_refused(account: Account, client: Client) -> None:
    other = new_account(client)
    project = add_project(account)

    assert encrypt(other.api, {"plainValue": PLAIN, "projectSlug": project["slug"]}).status == 404
    assert encrypt(Caller(client, None), {"plainValue": PLAIN}).status == 401


def test_the_view_answers_the_value_as_text_a_tool_stores_as_it_comes(account: Account) -> None:
    """Called as its route calls it (api/calls.answer), with the body conda-smithy sends."""
    from chalicelib.api.calls import answer

    headers = {"Authorization": f"Bearer {account.key}", "Content-Type": "application/x-www-form-urlencoded"}
    request = request_of("POST", "/account/encrypt", headers, body=f"plainValue={PLAIN}".encode())

    response = answer(encrypted_value_views.encrypt_value, None, None, request, {}).to_dict()

    assert response["statusCode"] == 200, response
    assert response["headers"]["Content-Type"].startswith("text/plain")
    assert response["body"].startswith("cvya:") and not response["body"].startswith('"')


# --- a value of POST /api/account/encrypt is an environment variable's, never a notification's or a deployment's --


def test_an_encrypted_value_is_not_sent_by_a_notification_of_appveyor_yml(
    account: Account,
    build_project,  # type: ignore[no-untyped-def]
) -> None:
    """The attack: a member who may only view project A copies A's encrypted value into the appveyor.yml of a
    project they can push to, as a webhook's header aimed at their own server: nothing is sent there."""
    value = encrypted(account.api)
    with WebhookReceiver() as receiver:
        notification = ("  - provider: Webhook", f"    url: {receiver.url}/hook", "    headers:", "      X-Token:")
        yml = appveyor_yml(
            "build_script:",
            "  - echo hi",
            "notifications:",
            *notification,
            f"        secure: {value}",
            "    on_build_success: true",
        )
        project = build_project(account, yml)

        build, _ = ran(project)
        messages = messages_of(project, build)

        assert build["status"] == "success", build
        assert receiver.requests == []
    assert any(message.startswith("Notification 1 (Webhook) was not sent") for message in messages), messages


def test_an_encrypted_value_is_not_delivered_by_a_deploy_entry_of_appveyor_yml(
    account: Account, git_server: GitServer, pump: SqsPump, tmp_path: Path
) -> None:
    with FtpServer(tmp_path) as ftp:
        value = encrypted(account.api, plain=ftp.password)
        project = BuildProject(
            account, git_server, {"appveyor.yml": ARTIFACTS_YML + appveyor_yml("deploy:", *ftp_entry(ftp, value))}
        )

        build = project.run()
        (deployment,) = build_deployments(project, build, 1)

    assert deployment["status"] == "failed"
    log = job_log(project, deployment)
    assert "The secure setting password cannot be used" in log
    assert list(tmp_path.rglob("*.*")) == []


@pytest.mark.parametrize("form", ["for: items", "a list of configurations"])
def test_a_per_branch_settings_yaml_stores_an_encrypted_value_as_its_variables_own_token(
    account: Account, git_server: GitServer, pump: SqsPump, form: str
) -> None:
    """Settings YAML kept as written holds no value that decrypts elsewhere: whoever may view the project (and read
    the YAML) finds the variable's own token, which decrypts nowhere else; its builds still get the value."""
    project = branch_project(account, git_server)
    value = encrypted(account.api)
    printed = "build_script:\n  - echo \"TOKEN=${TOKEN:-unset}\" | sed 's/./&-/g'\n"
    if form == "for: items":
        text = (
            f"environment:\n  TOKEN:\n    secure: {value}\n{printed}"
            f"for:\n  - branches:\n      only: [dev]\n    environment:\n      TOKEN:\n        secure: {value}\n"
        )
    else:
        text = (
            f"- branches:\n    only: [dev]\n  environment:\n    TOKEN:\n      secure: {value}\n"
            + "".join(f"  {line}\n" for line in printed.splitlines())
            + f"- environment:\n    TOKEN:\n      secure: {value}\n"
            + "".join(f"  {line}\n" for line in printed.splitlines())
        )

    reply = put_yaml(account, project.project, text)

    assert reply.status == 204, reply.body
    shown = read_yaml(account, project.project)
    assert value not in shown and "cvya:" not in shown and "cvy2:" in shown, shown
    assert SPREAD in built_log(project, "master")
    assert SPREAD in built_log(project, "dev")
    again = put_yaml(account, project.project, shown)  # put back as read: the tokens are the ones stored
    assert again.status == 204, again.body
    assert read_yaml(account, project.project) == shown


def test_one_encrypted_value_at_two_variables_of_a_per_branch_settings_yaml_is_refused(account: Account) -> None:
    project = add_project(account)
    value = encrypted(account.api)
    text = (
        f"environment:\n  ONE:\n    secure: {value}\n"
        f"for:\n  - branches:\n      only: [dev]\n    environment:\n      TWO:\n        secure: {value}\n"
    )

    reply = put_yaml(account, project, text)

    assert reply.status == 400, reply.body
    assert "ONE" in reply.json["message"] and "TWO" in reply.json["message"], reply.json


def test_a_value_written_once_under_an_anchor_is_replaced_where_it_is_written(account: Account) -> None:
    """Two configurations read it through an alias, at the same variable: the text gets its one token there."""
    project = add_project(account)
    value = encrypted(account.api)
    text = (
        f"- branches:\n    only: [dev]\n  environment:\n    TOKEN: &token\n      secure: {value}\n"
        "- environment:\n    TOKEN: *token\n"
    )
    owner = secrets.Owner(project["accountId"], "project", project["projectId"])

    bound, made = bound_encrypted_values(owner, text)

    [(token, field)] = made.items()
    assert field == "variable/TOKEN" and bound == text.replace(value, token)
    assert secrets.decrypt(owner, field, token) == PLAIN
    with pytest.raises(Invalid):  # the field's own token: no other field's
        secrets.decrypt(owner, "variable/OTHER", token)
