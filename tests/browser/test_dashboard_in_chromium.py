"""The dashboard in a real headless Chromium against ``conveyor local``: signing in both ways, adding a project of
a local git repository, a build's log followed live to its success, a slow build cancelled and its jobs re-run,
a deployment to a webhook on loopback, bad YAML refused in place, and the account's build agents with a job that
waits for one; a build's page (issue 36): its jobs listed, one shown at a time in tabs at an address of its own,
artifacts downloaded with an API key, a finished log opened at its top, a job that could not run saying why.
Each page is photographed at 360 px and at desktop width into tests/artifacts/browser/."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.conftest import SCREENSHOTS
from tests.e2e.test_local_stack import KNOWN_KEY, LocalStack, finished
from tests.functional.test_build_agents import start_agent
from tests.gitserver import GitServer, Repository
from tests.peers import WebhookReceiver
from tests.support import unique

PASSWORD = "dashboard-password"
WIDTHS = (360, 1280)
HISTORY_PAGE = 20  # builds per page of a project's history (PAGE_SIZE in chalicelib/web/projects.js)
STREAMING_YML = (
    "build_script:\n"
    "  - printf '\\033[32mcolour green\\033[0m plain\\n'\n"
    '  - for i in $(seq 1 40); do echo "line $i"; sleep 0.2; done\n'
    "  - echo made > out.txt\n"
    "artifacts:\n"
    "  - path: out.txt\n"
)
SLOW_YML = "build_script:\n  - echo started slowly\n  - sleep 120\n"
QUICK_YML = "build_script:\n  - echo quick > site.txt\nartifacts:\n  - path: site.txt\n"
REPORTING_YML = (
    "test_script:\n"
    '  - appveyor AddTest "parses an empty file" -Framework xUnit -FileName ParserTests.cs -Outcome Passed'
    " -Duration 12\n"
    '  - appveyor AddTest "parses a large file" -Framework xUnit -FileName ParserTests.cs -Outcome Passed'
    " -Duration 1530\n"
    '  - appveyor AddTest "rejects a bad token" -Framework xUnit -FileName ParserTests.cs -Outcome Failed'
    ' -Duration 7 -ErrorMessage "Expected an error, got none" -ErrorStackTrace "at ParserTests.Rejects() line 42"\n'
    '  - appveyor AddMessage "1 test failed" -Category Warning\n'
)


class Api:
    """The stack's API with the bootstrap key, for what a test sets up rather than tests."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {KNOWN_KEY}"

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, f"{self.stack.base_url}/api{path}", timeout=30, **kwargs)

    def add_project(self, server: GitServer, root: Any, yml: str) -> str:
        name = f"{unique('repo')}.git"
        Repository.create(root, name).commit({"appveyor.yml": yml})
        reply = self.call(
            "POST", "/projects", json={"repositoryProvider": "git", "repositoryName": server.url_of(name)}
        )
        assert reply.status_code == 200, reply.text
        slug: str = reply.json()["slug"]
        return slug


@pytest.fixture(scope="module")
def api(stack: LocalStack) -> Api:
    return Api(stack)


@pytest.fixture
def register_agent(api: Api) -> Iterator[Callable[[str, list[str]], dict[str, Any]]]:
    """Registers build agents through the API, and deletes them afterwards: each test finds none."""
    registered: list[dict[str, Any]] = []

    def register(name: str, images: list[str]) -> dict[str, Any]:
        reply = api.call("POST", "/build-agents", json={"name": name, "images": images})
        assert reply.status_code == 200, reply.text
        registered.append(reply.json())
        return registered[-1]

    yield register
    for agent in registered:
        assert api.call("DELETE", f"/build-agents/{agent['agentId']}").status_code == 204


@pytest.fixture(scope="module")
def user(api: Api) -> str:
    """An administrator of the stack's account with a password, added through the API."""
    roles = api.call("GET", "/roles").json()
    email = f"{unique('dashboard')}@team.example"
    reply = api.call(
        "POST",
        "/users",
        json={
            "fullName": "Dash Board",
            "email": email,
            "roleId": next(role["roleId"] for role in roles if role["name"] == "Administrator"),
            "password": PASSWORD,
            "confirmPassword": PASSWORD,
        },
    )
    assert reply.status_code == 204, reply.text
    return email


@pytest.fixture
def driver(browser: WebDriver, stack: LocalStack, request: pytest.FixtureRequest) -> Iterator[WebDriver]:
    """The browser on a blank page of the stack's origin, signed out, and its console checked afterwards (a failed
    test's page is photographed, and its console printed)."""
    browser.get(f"{stack.base_url}/#/signin")
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    browser.execute_script("sessionStorage.clear(); localStorage.clear();")
    browser.get_log("browser")  # what earlier tests left
    yield browser
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        browser.save_screenshot(str(SCREENSHOTS / f"FAILED-{request.node.name}.png"))
        print("browser console:", *[entry["message"] for entry in browser.get_log("browser")], sep="\n")
        return
    problems = [
        entry["message"]
        for entry in browser.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]
    ]
    assert not problems, problems


def wait(driver: WebDriver, condition: Callable[[WebDriver], Any], seconds: float = 30) -> Any:
    """``condition``'s first truthy answer; a page re-rendered meanwhile (a stale element) is asked again."""
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, seconds, poll_frequency=0.1, ignored_exceptions=ignored).until(condition)


def element(driver: WebDriver, css: str, seconds: float = 30) -> WebElement:
    found: WebElement = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, css), seconds)
    return found


def click(driver: WebDriver, css: str, seconds: float = 30) -> None:
    """Click the element matching ``css``, found again if the page redrew it between the find and the click (a
    build page redraws as its build moves on)."""

    def clicked(d: WebDriver) -> bool:
        d.find_element(By.CSS_SELECTOR, css).click()
        return True

    wait(driver, clicked, seconds)


def text_of(driver: WebDriver, css: str, text: str, seconds: float = 30) -> WebElement:
    """The element matching ``css`` once its text contains ``text``."""

    def found(d: WebDriver) -> WebElement | bool:
        for candidate in d.find_elements(By.CSS_SELECTOR, css):
            if text in candidate.text:
                return candidate
        return False

    matched: WebElement = wait(driver, found, seconds)
    return matched


def status_becomes(driver: WebDriver, css: str, status: str, seconds: float = 60) -> None:
    element(driver, f'{css} [data-status="{status}"]', seconds)


def screenshots(driver: WebDriver, name: str, dark: bool = False) -> None:
    """The page at each width, as tests/artifacts/browser/{name}-{width}.png (and -dark, in the dark scheme), none
    of them wider than the window."""
    for scheme in ("light", "dark") if dark else ("light",):
        features = [{"name": "prefers-color-scheme", "value": scheme}]
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})
        for width in WIDTHS:
            driver.set_window_size(width, 900)
            time.sleep(0.3)  # one layout pass
            overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{name} is wider than {width} px by {overflow} px"
            suffix = "-dark" if scheme == "dark" else ""
            driver.save_screenshot(str(SCREENSHOTS / f"{name}-{width}{suffix}.png"))
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]}
    )
    driver.set_window_size(WIDTHS[-1], 900)


def api_cookies(driver: WebDriver, stack: LocalStack) -> list[dict[str, Any]]:
    """The session cookies the browser holds for /api (WebDriver's own call sees only the page's path's)."""
    cookies = driver.execute_cdp_cmd("Network.getCookies", {"urls": [f"{stack.base_url}/api/caller"]})["cookies"]
    return [cookie for cookie in cookies if cookie["name"] == "conveyor_session"]


def sign_in(driver: WebDriver, stack: LocalStack, email: str) -> None:
    driver.get(f"{stack.base_url}/#/signin")
    form = element(driver, "#sign-in-password")
    form.find_element(By.NAME, "email").send_keys(email)
    form.find_element(By.NAME, "password").send_keys(PASSWORD)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    text_of(driver, "h1", "Projects")


def test_signing_in_with_email_and_password_sets_a_cookie_script_cannot_read(
    driver: WebDriver, stack: LocalStack, user: str
) -> None:
    driver.get(f"{stack.base_url}/")
    element(driver, "#sign-in-password")  # no session: the page asks to sign in
    screenshots(driver, "sign-in")
    form = element(driver, "#sign-in-password")
    form.find_element(By.NAME, "email").send_keys(user)
    form.find_element(By.NAME, "password").send_keys("not the password")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    text_of(driver, "#sign-in-password .message.error", "not right")
    form.find_element(By.NAME, "password").clear()
    form.find_element(By.NAME, "password").send_keys(PASSWORD)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    text_of(driver, "h1", "Projects")
    assert user in driver.find_element(By.ID, "who").text or "Dash Board" in driver.find_element(By.ID, "who").text
    (cookie,) = api_cookies(driver, stack)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/api"
    assert 11 * 3600 < cookie["expires"] - time.time() <= 12 * 3600
    assert "conveyor_session" not in driver.execute_script("return document.cookie")
    assert driver.execute_script("return sessionStorage.length + localStorage.length") == 0

    driver.find_element(By.ID, "sign-out").click()
    element(driver, "#sign-in-password")
    assert api_cookies(driver, stack) == []


def test_signing_in_with_an_api_key_keeps_it_in_session_storage_only(driver: WebDriver, stack: LocalStack) -> None:
    driver.get(f"{stack.base_url}/#/signin")
    form = element(driver, "#sign-in-key")
    form.find_element(By.NAME, "key").send_keys("not-a-key")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    refusal = text_of(driver, "#sign-in-key .message.error", "This API key was not accepted")
    assert "Authorization required" in refusal.text  # the API's word, as the permission matrix pins it
    assert not driver.find_element(By.ID, "nav").is_displayed()  # signed out: nowhere to go but here
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", refusal)
    screenshots(driver, "sign-in-wrong-key")
    form.find_element(By.NAME, "key").clear()
    form.find_element(By.NAME, "key").send_keys(KNOWN_KEY)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    text_of(driver, "h1", "Projects")
    assert "API key" in driver.find_element(By.ID, "who").text
    assert driver.find_element(By.ID, "nav").is_displayed()
    assert driver.execute_script("return sessionStorage.getItem('conveyor.apiKey')") == KNOWN_KEY
    assert driver.execute_script("return localStorage.length") == 0
    assert api_cookies(driver, stack) == []
    driver.find_element(By.ID, "sign-out").click()
    element(driver, "#sign-in-key")
    assert driver.execute_script("return sessionStorage.length") == 0


def test_a_project_added_and_built_in_the_browser_shows_its_log_growing_in_colour_until_success(
    driver: WebDriver, stack: LocalStack, user: str, git_server: GitServer, tmp_path: Any
) -> None:
    name = f"{unique('watched')}.git"
    Repository.create(git_server.root, name).commit({"appveyor.yml": STREAMING_YML})
    sign_in(driver, stack, user)

    form = element(driver, "#add-project")
    Select(form.find_element(By.NAME, "provider")).select_by_value("git")
    form.find_element(By.NAME, "repository").send_keys(git_server.url_of(name))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    start = element(driver, "#start-build")
    screenshots(driver, "project-new")
    start.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    status_becomes(driver, "#build-status", "running")
    log = element(driver, "pre.log code")
    lengths, heights = [], set()
    deadline = time.monotonic() + 90
    while not driver.find_elements(By.CSS_SELECTOR, '#build-status [data-status="success"]'):
        assert time.monotonic() < deadline, "the build did not succeed in time"
        assert not driver.find_elements(By.CSS_SELECTOR, '#build-status [data-status="failed"]'), log.text
        lengths.append(len(log.get_attribute("textContent") or ""))
        heights.add(driver.execute_script("return document.querySelector('pre.log').getBoundingClientRect().height"))
        if len(lengths) == 10:
            screenshots(driver, "build-running")
        time.sleep(0.3)

    growth = sorted(set(lengths))
    assert len([length for length in growth if length > 0]) >= 3, f"the log did not grow while running: {growth}"
    assert lengths == sorted(lengths), "the log lost text while it grew"
    assert len(heights) == 1, f"the log box changed height while streaming: {heights}"
    text_of(driver, "pre.log", "line 40")
    green = driver.find_element(By.CSS_SELECTOR, "pre.log span.ansi-fg-2")
    assert green.text == "colour green"
    assert "\x1b" not in (log.get_attribute("textContent") or "")
    assert driver.execute_script(
        "const box = document.querySelector('pre.log'); return box.scrollHeight > box.clientHeight"
        " && box.scrollTop + box.clientHeight >= box.scrollHeight - 8"
    ), "the log is not scrolled to its end"
    link = element(driver, '.artifacts a[href*="/artifacts/out.txt"]')
    redirect = driver.execute_script(
        "return fetch(arguments[0], {redirect: 'manual'}).then(r => r.type)", link.get_attribute("href")
    )
    assert redirect == "opaqueredirect"  # 302 to the file: the cookie opens the link
    assert driver.find_elements(By.ID, "rerun-build") and not driver.find_elements(By.ID, "cancel-build")
    screenshots(driver, "build-success", dark=True)

    driver.get(f"{stack.base_url}/#/projects")
    row = element(driver, "#projects tr.status-row.success")
    assert "success" in row.text
    screenshots(driver, "projects", dark=True)


def test_a_build_whose_script_reported_tests_shows_them_and_its_messages(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, REPORTING_YML)
    version = api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug}).json()["version"]
    assert finished(stack, f"/api/projects/local/{slug}/build/{version}", "build")["status"] == "success"
    sign_in(driver, stack, user)

    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{version}")
    click(driver, '[data-tab="tests"]')

    rows_css = '[data-reports="tests"] tr[data-test]'
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, rows_css)) == 3)
    rows = [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in driver.find_elements(By.CSS_SELECTOR, rows_css)
    ]
    assert rows == [
        ["parses an empty file", "Passed", "12 ms"],
        ["parses a large file", "Passed", "1.5 s"],
        ["rejects a bad token\nExpected an error, got none\nStack trace", "Failed", "7 ms"],
    ]
    assert "3 · 2 passed · 1 failed" in element(driver, '[data-reports="tests"] h3').text
    trace = element(driver, '[data-outcome="Failed"] details[data-fold="stack"]')
    assert not trace.find_element(By.TAG_NAME, "pre").is_displayed()  # folded until asked for
    trace.find_element(By.TAG_NAME, "summary").click()
    assert trace.find_element(By.TAG_NAME, "pre").text == "at ParserTests.Rejects() line 42"
    screenshots(driver, "build-tests", dark=True)
    click(driver, '[data-tab="messages"]')
    (message,) = driver.find_elements(By.CSS_SELECTOR, '[data-reports="messages"] li')
    assert message.get_attribute("data-category") == "warning"
    assert message.find_element(By.CSS_SELECTOR, ".status").text == "warning" and "1 test failed" in message.text
    assert element(driver, '[data-tab="messages"]').text == "Messages (1)"
    screenshots(driver, "build-messages")


def test_a_slow_build_is_cancelled_from_its_page(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, SLOW_YML)
    sign_in(driver, stack, user)
    driver.get(f"{stack.base_url}/#/projects/local/{slug}")
    click(driver, "#start-build button[type=submit]")
    status_becomes(driver, "#build-status", "running")
    text_of(driver, "pre.log", "started slowly")

    click(driver, "#cancel-build")

    status_becomes(driver, "#build-status", "cancelled", seconds=30)
    element(driver, "#rerun-incomplete")
    screenshots(driver, "build-cancelled")
    history = api.call("GET", f"/projects/local/{slug}/history?recordsNumber=5").json()["builds"]
    assert [build["status"] for build in history] == ["cancelled"]


def test_a_successful_build_is_deployed_to_a_webhook_and_its_deployment_log_shown(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, QUICK_YML)
    version = api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug}).json()["version"]
    assert finished(stack, f"/api/projects/local/{slug}/build/{version}", "build")["status"] == "success"
    with WebhookReceiver() as receiver:
        environment = unique("hook")
        added = api.call(
            "POST",
            "/environments",
            json={
                "name": environment,
                "provider": "Webhook",
                "settings": {
                    "providerSettings": [
                        {"name": "url", "value": {"isEncrypted": False, "value": f"{receiver.url}/hook"}}
                    ],
                    "environmentVariables": [],
                },
            },
        )
        assert added.status_code == 200, added.text
        sign_in(driver, stack, user)
        driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{version}")
        form = element(driver, "#deploy-build")
        Select(form.find_element(By.NAME, "environment")).select_by_value(environment)
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

        status_becomes(driver, "#deployment-status", "success")
        element(driver, "pre.log")
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "pre.log").text.strip())
        screenshots(driver, "deployment")
        assert [request.path for request in receiver.requests] == ["/hook"]
        assert receiver.requests[0].json["build"]["version"] == version

    driver.get(f"{stack.base_url}/#/environments")
    text_of(driver, "#environments", environment).find_element(By.LINK_TEXT, environment).click()
    text_of(driver, "#environment-deployments", slug.split("-")[0])
    screenshots(driver, "environment")
    driver.get(f"{stack.base_url}/#/projects/local/{slug}")
    text_of(driver, "#deployments", environment)
    filter_form = element(driver, "#branch-filter")
    filter_form.find_element(By.NAME, "branch").send_keys("no-such-branch")
    filter_form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    text_of(driver, "#history", "No builds.")
    filter_form.find_element(By.NAME, "branch").clear()
    filter_form.find_element(By.NAME, "branch").send_keys("master")
    filter_form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    element(driver, f'#history tr[data-version="{version}"]')


def test_bad_yaml_shows_the_services_message_in_place_and_good_yaml_saves(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, QUICK_YML)
    sign_in(driver, stack, user)
    driver.get(f"{stack.base_url}/#/projects/local/{slug}")
    editor = element(driver, "#settings-yaml textarea")
    before = api.call("GET", f"/projects/local/{slug}/settings/yaml").text

    editor.clear()
    editor.send_keys("build_script: [unclosed\n")
    click(driver, "#settings-yaml button[type=submit]")

    error = element(driver, ".message.error")
    expected = api.call("PUT", f"/projects/local/{slug}/settings/yaml", data=b"build_script: [unclosed\n").json()
    wait(driver, lambda d: error.text == expected["message"])
    assert api.call("GET", f"/projects/local/{slug}/settings/yaml").text == before
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")  # the message under the editor
    screenshots(driver, "settings-bad-yaml")

    editor.clear()
    editor.send_keys("build_script:\n  - echo from the dashboard\n")
    click(driver, "#settings-yaml button[type=submit]")
    text_of(driver, ".message.info", "Saved.")
    assert "echo from the dashboard" in api.call("GET", f"/projects/local/{slug}/settings/yaml").text


def test_a_projects_history_shows_a_page_of_builds_and_the_older_ones_on_request(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, QUICK_YML)
    started = [
        api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug, "branch": "master"}).json()
        for _ in range(HISTORY_PAGE + 5)
    ]
    sign_in(driver, stack, user)
    driver.get(f"{stack.base_url}/#/projects/local/{slug}")

    def shown() -> list[str]:
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.status-row[data-version]")
        return [row.get_attribute("data-version") or "" for row in rows]

    wait(driver, lambda d: len(shown()) == HISTORY_PAGE)
    newest_first = [build["version"] for build in reversed(started)]
    assert shown() == newest_first[:HISTORY_PAGE]
    click(driver, "#older-builds")

    wait(driver, lambda d: len(shown()) == len(started))
    assert shown() == newest_first
    assert not element(driver, "#older-builds").is_displayed()  # nothing older to ask for
    for build in started:  # the rest need not run: the stack then stops without waiting for two dozen builds
        assert api.call("DELETE", f"/builds/local/{slug}/{build['version']}").status_code == 204


def test_the_build_agents_page_says_how_to_add_one_then_lists_it_not_connected(
    driver: WebDriver, stack: LocalStack, user: str, register_agent: Callable[[str, list[str]], dict[str, Any]]
) -> None:
    sign_in(driver, stack, user)
    click(driver, "#nav a[href='#/agents']")
    empty = element(driver, "#no-agents")
    assert "POST /api/build-agents" in empty.text
    assert f"CONVEYOR_AGENT_KEY=<key> conveyor agent --builds --url {stack.base_url}" in empty.text
    screenshots(driver, "agents-empty")
    name = unique("win")
    agent = register_agent(name, ["Visual Studio 2022", "gpu-box"])

    driver.refresh()

    row = element(driver, f'#agents tr[data-agent="{agent["agentId"]}"]')
    cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    assert cells == [name, "Visual Studio 2022, gpu-box", "not connected", "never", ""]
    assert agent["key"] not in driver.find_element(By.TAG_NAME, "body").text  # shown once, by the API
    screenshots(driver, "agents", dark=True)


def test_a_job_for_an_image_only_a_silent_agent_serves_shows_it_waits_for_one(
    driver: WebDriver,
    stack: LocalStack,
    api: Api,
    user: str,
    git_server: GitServer,
    register_agent: Callable[[str, list[str]], dict[str, Any]],
) -> None:
    image = unique("office-box")
    name = unique("office")
    register_agent(name, [image])
    slug = api.add_project(git_server, git_server.root, f"image: {image}\nbuild_script:\n  - echo never here\n")
    version = api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug}).json()["version"]
    sign_in(driver, stack, user)

    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{version}")

    status_becomes(driver, "#build-status", "queued")
    waiting = text_of(driver, ".job .waiting", f"Waiting for a build agent that serves the image '{image}'")
    assert "none is connected" in waiting.text and name in waiting.text
    assert element(driver, ".job header .executor").text == "runs on: build agent"
    screenshots(driver, "build-waiting-for-agent")
    assert api.call("DELETE", f"/builds/local/{slug}/{version}").status_code == 204
    status_becomes(driver, "#build-status", "cancelled")
    # no longer waiting: the job says who cancelled it instead
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".job .waiting").text.startswith("Cancelled by "))


def test_a_job_a_build_agent_ran_shows_the_agents_name(
    driver: WebDriver,
    stack: LocalStack,
    api: Api,
    user: str,
    git_server: GitServer,
    register_agent: Callable[[str, list[str]], dict[str, Any]],
) -> None:
    image = unique("office-box")
    name = unique("office")
    agent = register_agent(name, [image])
    slug = api.add_project(git_server, git_server.root, f"image: {image}\nbuild_script:\n  - echo on the agent\n")
    version = api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug}).json()["version"]
    process = start_agent(stack.base_url, agent["key"], "--once")
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output.decode()
    sign_in(driver, stack, user)

    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{version}")

    status_becomes(driver, "#build-status", "success")
    assert element(driver, ".job header .executor").text == f"runs on: build agent {name}"
    text_of(driver, ".job", f"Running on build agent {name}.")


MATRIX_YML = (
    "environment:\n"
    "  matrix:\n"
    "    - ROLE: solid\n"
    "    - ROLE: experimental\n"
    "matrix:\n"
    "  allow_failures:\n"
    "    - ROLE: experimental\n"
    "build_script:\n"
    '  - echo "this is the $ROLE job"\n'
    '  - appveyor AddTest "works as $ROLE" -Framework xUnit -FileName T.cs -Outcome Passed -Duration 5\n'
    '  - test "$ROLE" = solid\n'
)
LONG_YML = 'build_script:\n  - for i in $(seq 1 200); do echo "line $i"; done\n'


def built(stack: LocalStack, api: Api, slug: str) -> dict[str, Any]:
    """A build of the project, started through the API and finished."""
    version = api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug}).json()["version"]
    return finished(stack, f"/api/projects/local/{slug}/build/{version}", "build")


def sign_in_with_the_key(driver: WebDriver, stack: LocalStack) -> None:
    driver.get(f"{stack.base_url}/#/signin")
    form = element(driver, "#sign-in-key")
    form.find_element(By.NAME, "key").send_keys(KNOWN_KEY)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    text_of(driver, "h1", "Projects")


def test_an_artifact_downloads_when_signed_in_with_an_api_key_and_a_failed_download_says_why(
    driver: WebDriver, stack: LocalStack, api: Api, git_server: GitServer, tmp_path: Any
) -> None:
    slug = api.add_project(git_server, git_server.root, QUICK_YML)
    build = built(stack, api, slug)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    sign_in_with_the_key(driver, stack)  # a key: a plain link would go without it, and get a 401
    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{build['version']}")

    click(driver, '[data-tab="artifacts"]')
    click(driver, '.artifacts a[href*="/artifacts/site.txt"]')

    wait(driver, lambda d: (tmp_path / "site.txt").exists() and (tmp_path / "site.txt").read_text() == "quick\n")
    text_of(driver, "[data-panel=artifacts] .message.info", "Downloading site")  # its name: its file's, bare
    assert api.call("DELETE", f"/builds/{build['buildId']}").status_code == 204  # gone meanwhile
    click(driver, '.artifacts a[href*="/artifacts/site.txt"]')
    failure = text_of(driver, "[data-panel=artifacts] .message.error", "site could not be downloaded")
    assert "not found" in failure.text.lower(), failure.text
    screenshots(driver, "build-artifact-download-failed")


def test_re_running_a_cancelled_jobs_shows_its_new_log_not_the_old_one(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, SLOW_YML)
    sign_in(driver, stack, user)
    driver.get(f"{stack.base_url}/#/projects/local/{slug}")
    click(driver, "#start-build button[type=submit]")
    text_of(driver, "pre.log", "started slowly")
    click(driver, "#cancel-build")
    text_of(driver, "pre.log", "Cancelled by ", seconds=30)  # who cancelled it: the log's last line

    click(driver, "#rerun-incomplete")

    status_becomes(driver, "#build-status", "running")
    wait(driver, lambda d: "Cancelled by " not in d.find_element(By.CSS_SELECTOR, "pre.log").text)
    text_of(driver, "pre.log", "started slowly")
    screenshots(driver, "build-rerun-incomplete")
    click(driver, "#cancel-build")
    status_becomes(driver, "#build-status", "cancelled", seconds=30)


def open_failed_job(driver: WebDriver, where: tuple[LocalStack, Api, str, GitServer], yml: str, logged: str) -> str:
    """Build a one-job project of ``yml``, which fails, and open its build signed in; the job's message, once its
    log shows ``logged`` and the page shows the message in red above the log."""
    stack, api, user, git_server = where
    slug = api.add_project(git_server, git_server.root, yml)
    build = built(stack, api, slug)
    reason = str(build["jobs"][0]["message"])
    sign_in(driver, stack, user)
    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{build['version']}")
    text_of(driver, "pre.log", logged)
    assert element(driver, ".job .waiting.refused").text == reason
    return reason


def test_a_job_that_could_not_run_says_why_as_its_logs_first_line(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    yml = "image: macos-sonoma\nbuild_script:\n  - echo never\n"
    reason = open_failed_job(driver, (stack, api, user, git_server), yml, logged="macos-sonoma")

    assert "'macos-sonoma'" in reason
    assert driver.find_element(By.CSS_SELECTOR, "pre.log").text.splitlines()[0] == reason
    assert not driver.find_elements(By.ID, "build-jobs")  # one job: the page opens on its console
    assert element(driver, '[data-tab="console"]').get_attribute("aria-selected") == "true"
    screenshots(driver, "build-job-could-not-run")


def test_a_job_that_failed_says_why_above_its_log(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    yml = "build_script:\n  - echo built\n  - exit 3\n"
    reason = open_failed_job(driver, (stack, api, user, git_server), yml, logged="built")

    assert "exited with code 3 in build_script" in reason
    screenshots(driver, "build-job-failed")


def test_a_finished_builds_log_opens_at_its_first_line(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, LONG_YML)
    build = built(stack, api, slug)
    sign_in(driver, stack, user)

    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{build['version']}")

    text_of(driver, "pre.log", "line 200")
    time.sleep(1.5)  # a poll or two: nothing may scroll it meanwhile
    top, scrollable = driver.execute_script(
        "const box = document.querySelector('pre.log'); return [box.scrollTop, box.scrollHeight > box.clientHeight]"
    )
    assert (top, scrollable) == (0, True)
    screenshots(driver, "build-finished-log-top")


def test_a_matrix_build_lists_its_jobs_and_shows_one_at_a_time_with_tabs_at_a_url_of_its_own(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    slug = api.add_project(git_server, git_server.root, MATRIX_YML)
    build = built(stack, api, slug)
    assert build["status"] == "success"
    solid, experimental = build["jobs"]
    sign_in(driver, stack, user)

    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{build['version']}")

    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#build-jobs tbody tr")) == 2)
    assert not driver.find_elements(By.CSS_SELECTOR, "pre.log")  # the list first, no log stacked under it
    rows = {
        row.get_attribute("data-job"): [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in driver.find_elements(By.CSS_SELECTOR, "#build-jobs tbody tr")
    }
    assert rows[solid["jobId"]][:2] == [solid["name"], "success"]
    assert rows[experimental["jobId"]][:2] == [experimental["name"], "failed\nallowed to fail"]
    assert rows[solid["jobId"]][3:] == ["1 · 1 passed · 0 failed", "runner"]
    assert rows[solid["jobId"]][2].endswith(" s")
    screenshots(driver, "build-matrix-jobs", dark=True)

    driver.find_element(By.LINK_TEXT, experimental["name"]).click()

    wait(driver, lambda d: d.current_url.endswith(f"/build/{build['version']}/job/{experimental['jobId']}"))
    text_of(driver, "pre.log", "this is the experimental job")
    assert "this is the solid job" not in driver.find_element(By.ID, "jobs").text
    assert element(driver, ".job header [data-allowed-failure]").text == "allowed to fail"
    tabs = [tab.text for tab in driver.find_elements(By.CSS_SELECTOR, "[role=tab]")]
    assert tabs == ["Console", "Messages (1)", "Tests (1)", "Artifacts"]  # its failure is a message too
    screenshots(driver, "build-matrix-job-console")
    click(driver, '[data-tab="tests"]')
    text_of(driver, "[data-panel=tests]", "works as experimental")
    assert not driver.find_element(By.CSS_SELECTOR, "pre.log").is_displayed()
    screenshots(driver, "build-matrix-job-tests")

    shared = driver.current_url
    driver.get(f"{stack.base_url}/#/projects")
    driver.get(shared)
    driver.refresh()  # a link to the job, opened afresh, opens on it
    text_of(driver, "pre.log", "this is the experimental job")
    click(driver, "#all-jobs")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#build-jobs tbody tr")) == 2)


RESULTS_XML = """\
<testsuite name="parser">
  <testcase classname="tests.test_parser" name="test_empty_file" time="0.012"/>
  <testcase classname="tests.test_parser" name="test_large_file" time="1.530"/>
  <testcase classname="tests.test_parser" name="test_bad_token" time="0.007">
    <failure message="AssertionError: expected an error, got none">def test_bad_token():
&gt;       assert parse("@") is None
E       AssertionError: expected an error, got none

tests/test_parser.py:12: AssertionError</failure>
  </testcase>
</testsuite>
"""
UPLOADING_YML = (
    "build: off\n"
    "test_script:\n"
    '  - curl -sS -f -F "file=@results.xml" "${APPVEYOR_API_URL}api/testresults/junit/$APPVEYOR_JOB_ID"\n'
)


def test_a_projects_tests_tab_and_a_failed_tests_stack_trace(
    driver: WebDriver, stack: LocalStack, api: Api, user: str, git_server: GitServer
) -> None:
    name = f"{unique('repo')}.git"
    Repository.create(git_server.root, name).commit({"appveyor.yml": UPLOADING_YML, "results.xml": RESULTS_XML})
    reply = api.call("POST", "/projects", json={"repositoryProvider": "git", "repositoryName": git_server.url_of(name)})
    slug = reply.json()["slug"]
    for _ in range(2):
        version = api.call("POST", "/builds", json={"accountName": "local", "projectSlug": slug}).json()["version"]
        assert finished(stack, f"/api/projects/local/{slug}/build/{version}", "build")["status"] == "success"
    sign_in(driver, stack, user)

    driver.get(f"{stack.base_url}/#/projects/local/{slug}/build/{version}")
    click(driver, '[data-tab="tests"]')
    failed = element(driver, '[data-reports="tests"] tr[data-test="tests.test_parser.test_bad_token"]')
    failed.find_element(By.CSS_SELECTOR, 'details[data-fold="stack"] summary').click()
    trace = failed.find_element(By.CSS_SELECTOR, 'details[data-fold="stack"] pre')
    assert "tests/test_parser.py:12: AssertionError" in trace.text
    driver.execute_script("document.querySelector('[data-reports=\"tests\"]').scrollIntoView()")
    screenshots(driver, "build-test-stack-trace")

    driver.get(f"{stack.base_url}/#/projects/local/{slug}")
    click(driver, "#tests-tab")
    rows_css = "#tests tr[data-test]"
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, rows_css)) == 3)
    names = [row.get_attribute("data-test") for row in driver.find_elements(By.CSS_SELECTOR, rows_css)]
    assert names[0] == "tests.test_parser.test_large_file"  # slowest first
    bad = element(driver, '#tests tr[data-test="tests.test_parser.test_bad_token"]')
    bars = bad.find_elements(By.CSS_SELECTOR, "svg.sparkline rect")
    assert [bar.get_attribute("data-outcome") for bar in bars] == ["failed", "failed"]
    assert "100 %" in bad.text
    screenshots(driver, "tests-tab", dark=True)

    click(driver, '#test-sorts a[href$="/failing"]')
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, rows_css).get_attribute("data-test").endswith("bad_token"))
