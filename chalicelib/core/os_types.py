"""AppVeyor's image families: a job's ``osType`` (``Windows`` or ``Ubuntu``, as AppVeyor answers it), from its image.

executors/images.py routes by the same names: Windows and macOS images run on build agents only.
"""

from __future__ import annotations

import re

WINDOWS_IMAGE = re.compile(r"^(previous )?visual studio 20(13|15|17|19|22)$|^wsl$", re.IGNORECASE)
MACOS_IMAGE = re.compile(r"^macos(-[a-z]+)?$", re.IGNORECASE)


def os_type(image: str | None) -> str:
    """A job's ``osType``: ``Windows`` for AppVeyor's Windows images, ``macOS`` for its macOS ones, else ``Ubuntu``
    (no image, an Ubuntu one, a container image)."""
    name = (image or "").strip()
    if WINDOWS_IMAGE.match(name):
        return "Windows"
    if MACOS_IMAGE.match(name):
        return "macOS"
    return "Ubuntu"


def is_windows(image: str | None) -> bool:
    """Whether ``image`` is one of AppVeyor's Windows images (its jobs run on a Windows build agent, or under Wine)."""
    return os_type(image) == "Windows"
