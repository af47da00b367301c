"""Test result files as AppVeyor takes them (``POST /api/testresults/{format}/{jobId}``), read into the test records
the Build Worker API writes: JUnit (pytest's --junitxml, surefire, JUnit 5), xUnit.net v2, NUnit 2 and 3, MSTest (trx).

A result file is the build's output, so its author may be hostile. Every parse is defusedxml's with DTDs forbidden:
no entity is ever expanded (billion laughs) and nothing outside the file is read (external entities); the file's
size is bounded before it is parsed, and every text kept is cut to a bound, so no test outgrows its item.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import PureWindowsPath
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml
from defusedxml import ElementTree

from chalicelib.errors import Invalid

FORMATS = {"junit": "JUnit", "xunit": "xUnit", "nunit": "NUnit", "nunit3": "NUnit3", "mstest": "MSTest"}
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_UPLOAD_BYTES = MAX_FILE_BYTES + 64 * 1024  # the file, and a multipart body's headers around it
MAX_TESTS = 10_000  # in one file (a job keeps at most job_reports.MAX_REPORTS_PER_JOB in all)
MAX_NAME = 1024
MAX_TEXT = 8 * 1024  # error message, stack trace, stdout, stderr: four of them fit a report's 64 KB
_TRX = "{http://microsoft.com/schemas/VisualStudio/TeamTest/2010}"
_TIMESPAN = re.compile(r"(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)")


def parse(format_name: str, data: bytes) -> list[dict[str, Any]]:
    """The tests a result file of ``format_name`` holds, as Build Worker API test records; Invalid (a 400) for a
    format not taken, a file too big, malformed XML (naming its line), or XML that declares a DTD or entities."""
    framework = FORMATS.get(format_name.lower())
    if framework is None:
        raise Invalid(f"Test results are taken as {', '.join(FORMATS)}; not {format_name[:40]!r}.")
    if not data.strip():
        raise Invalid("The test results file is empty: send it as the body, or as the multipart field 'file'.")
    if len(data) > MAX_FILE_BYTES:
        raise Invalid(f"A test results file is at most {MAX_FILE_BYTES:,} bytes; this one is {len(data):,}.")
    try:
        root = ElementTree.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except ParseError as error:
        line, column = getattr(error, "position", (0, 0))
        reason = str(error).split(":")[0]
        raise Invalid(
            f"The test results file is not well-formed XML: line {line}, column {column}: {reason}."
        ) from None
    except defusedxml.DefusedXmlException as error:
        raise Invalid(
            f"The test results file declares a DTD or entities ({type(error).__name__}); they are refused."
        ) from None
    tests = list(_READERS[framework](root))
    if len(tests) > MAX_TESTS:
        raise Invalid(f"A test results file holds at most {MAX_TESTS:,} tests; this one has {len(tests):,}.")
    return [{**test, "testFramework": framework} for test in tests]


def uploaded_file(data: bytes, content_type: str) -> bytes:
    """The file of an upload: the body as it is, or the multipart body's part named ``file`` (curl -F file=@...,
    WebClient's UploadFile); Invalid (a 400) when there is none, or it is too big."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise Invalid(f"A test results file is at most {MAX_FILE_BYTES:,} bytes; this body is {len(data):,}.")
    if not content_type.lower().startswith("multipart/"):
        return data
    message: Message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + data
    )
    if not message.is_multipart():
        raise Invalid("The multipart body could not be read: send the file as the body, or as the field 'file'.")
    parts = [part for part in message.get_payload() if isinstance(part, Message)]
    named = [part for part in parts if part.get_param("name", header="content-disposition") == "file"]
    chosen = named or [part for part in parts if part.get_filename()]
    if not chosen:
        raise Invalid("The multipart body has no field 'file' holding the test results file.")
    payload = chosen[0].get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


def _test(
    name: str | None,
    outcome: str,
    seconds: float | None,
    file_name: str | None = None,
    message: str | None = None,
    stack: str | None = None,
    stdout: str | None = None,
    stderr: str | None = None,
) -> dict[str, Any]:
    if not name:
        raise Invalid("A test in the results file has no name.")
    return {
        "testName": name[:MAX_NAME],
        "fileName": _cut(file_name, MAX_NAME),
        "outcome": outcome,
        "durationMilliseconds": None if seconds is None else max(0, round(seconds * 1000)),
        "ErrorMessage": _cut(message),
        "ErrorStackTrace": _cut(stack),
        "StdOut": _cut(stdout),
        "StdErr": _cut(stderr),
    }


def _cut(text: str | None, limit: int = MAX_TEXT) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return (text[: limit - 1] + "…" if len(text) > limit else text) or None


def _seconds(value: str | None, test: str | None) -> float | None:
    if value in (None, ""):
        return None
    try:
        seconds = float(value.replace(",", ""))
    except ValueError:
        raise Invalid(f"Test {str(test)[:200]!r}: its time {value[:40]!r} is not a number of seconds.") from None
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        raise Invalid(f"Test {str(test)[:200]!r}: its time {value[:40]!r} is not a number of seconds.")
    return seconds


def _root(root: Element, *tags: str) -> None:
    if root.tag not in tags:
        raise Invalid(f"Line 1: the file's root element is <{str(root.tag)[:60]}>, not <{'> or <'.join(tags)}>.")


def _text(element: Element | None, path: str | None = None) -> str | None:
    found = element if path is None or element is None else element.find(path)
    return None if found is None else "".join(found.itertext())


def _base_name(path: str | None) -> str | None:
    return PureWindowsPath(path).name if path else None


def _junit(root: Element) -> Iterator[dict[str, Any]]:
    from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite  # read only where a JUnit file comes

    _root(root, "testsuites", "testsuite")
    document = JUnitXml.fromroot(root)  # type: ignore[arg-type]  # its Element is ElementTree's (or lxml's)
    suites = [document] if isinstance(document, TestSuite) else list(document)
    while suites:
        suite = suites.pop(0)
        suites.extend(TestSuite.fromelem(nested) for nested in suite._elem.findall("testsuite"))
        for case in suite:
            name = f"{case.classname}.{case.name}" if case.classname else case.name
            results = case.result
            failure = next((r for r in results if isinstance(r, Failure | Error)), None)
            skipped = next((r for r in results if isinstance(r, Skipped)), None)
            outcome = "Failed" if failure is not None else "Skipped" if skipped is not None else "Passed"
            said = failure if failure is not None else skipped
            yield _test(
                name,
                outcome,
                _seconds(case._elem.get("time"), name),
                case._elem.get("file"),
                None if said is None else (said.message or said.type),
                None if failure is None else failure.text,
                case.system_out,
                case.system_err,
            )


_XUNIT_OUTCOMES = {"pass": "Passed", "fail": "Failed", "skip": "Skipped", "notrun": "NotRunnable"}


def _xunit(root: Element) -> Iterator[dict[str, Any]]:
    _root(root, "assemblies", "assembly")
    for assembly in [root] if root.tag == "assembly" else root.iter("assembly"):
        file_name = _base_name(assembly.get("name"))
        for test in assembly.iter("test"):
            yield _xml_case(test, test.get("name"), file_name, "time", _XUNIT_OUTCOMES, "reason")


_NUNIT3_OUTCOMES = {"passed": "Passed", "failed": "Failed", "skipped": "Skipped", "inconclusive": "Inconclusive"}
_NUNIT2_OUTCOMES = {
    "success": "Passed",
    "failure": "Failed",
    "error": "Failed",
    "ignored": "Ignored",
    "skipped": "Skipped",
    "notrunnable": "NotRunnable",
    "inconclusive": "Inconclusive",
    "cancelled": "Cancelled",
}


def _nunit3(root: Element) -> Iterator[dict[str, Any]]:
    _root(root, "test-run", "test-suite")
    yield from _nunit_cases(root, None, "fullname", "duration", _NUNIT3_OUTCOMES)


def _nunit(root: Element) -> Iterator[dict[str, Any]]:
    _root(root, "test-results", "test-suite")
    yield from _nunit_cases(root, _base_name(root.get("name")), "name", "time", _NUNIT2_OUTCOMES)


def _nunit_cases(
    element: Element, file_name: str | None, name_attribute: str, time_attribute: str, outcomes: dict[str, str]
) -> Iterator[dict[str, Any]]:
    """Test cases below ``element``, each with the assembly of its nearest enclosing assembly suite."""
    stack = [(element, file_name)]
    while stack:
        node, assembly = stack.pop()
        if node.tag == "test-suite" and (node.get("type") or "").lower() == "assembly":
            assembly = _base_name(node.get("name"))
        if node.tag == "test-case":
            name = node.get(name_attribute) or node.get("name")
            yield _xml_case(node, name, assembly, time_attribute, outcomes, "reason/message")
            continue
        stack.extend((child, assembly) for child in reversed(list(node)))


def _xml_case(
    case: Element,
    name: str | None,
    file_name: str | None,
    time_attribute: str,
    outcomes: dict[str, str],
    reason_path: str,
) -> dict[str, Any]:
    """One test of an xUnit or NUnit file: its outcome by ``outcomes``, its message its failure's, else its reason's."""
    failure = case.find("failure")
    return _test(
        name,
        outcomes.get((case.get("result") or "").lower(), "Inconclusive"),
        _seconds(case.get(time_attribute), name),
        file_name,
        _text(failure, "message") if failure is not None else _text(case, reason_path),
        _text(failure, "stack-trace"),
        _text(case, "output"),
    )


_TRX_OUTCOMES = {"passed": "Passed", "failed": "Failed", "notexecuted": "Skipped", "timeout": "Failed"}
_TRX_OUTCOMES.update({"aborted": "Cancelled", "inconclusive": "Inconclusive", "error": "Failed"})


def _mstest(root: Element) -> Iterator[dict[str, Any]]:
    _root(root, f"{_TRX}TestRun", "TestRun")
    ns = _TRX if root.tag.startswith(_TRX) else ""
    methods: dict[str, Element] = {}
    for unit_test in root.iter(f"{ns}UnitTest"):
        method = unit_test.find(f"{ns}TestMethod")
        if method is not None and unit_test.get("id"):
            methods[str(unit_test.get("id"))] = method
    for result in root.iter(f"{ns}UnitTestResult"):
        method = methods.get(result.get("testId") or "")
        class_name = method.get("className") if method is not None else None
        test_name = result.get("testName") or (method.get("name") if method is not None else None)
        name = f"{class_name.split(',')[0]}.{test_name}" if class_name and test_name else test_name
        output = result.find(f"{ns}Output")
        yield _test(
            name,
            _TRX_OUTCOMES.get((result.get("outcome") or "").lower(), "Inconclusive"),
            _timespan(result.get("duration"), name),
            _base_name(method.get("codeBase") if method is not None else None),
            _text(output, f"{ns}ErrorInfo/{ns}Message"),
            _text(output, f"{ns}ErrorInfo/{ns}StackTrace"),
            _text(output, f"{ns}StdOut"),
            _text(output, f"{ns}StdErr"),
        )


def _timespan(value: str | None, test: str | None) -> float | None:
    """A .NET TimeSpan (``[d.]hh:mm:ss[.fffffff]``) in seconds."""
    if not value:
        return None
    match = _TIMESPAN.fullmatch(value.strip())
    if match is None:
        raise Invalid(f"Test {str(test)[:200]!r}: its duration {value[:40]!r} is not a TimeSpan (hh:mm:ss.fffffff).")
    days, hours, minutes, seconds = match.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


_READERS = {"JUnit": _junit, "xUnit": _xunit, "NUnit": _nunit, "NUnit3": _nunit3, "MSTest": _mstest}
