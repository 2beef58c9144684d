"""Container image references as upstream's defaulting reads them (``parsers.ParseImageName``).

``SetDefaults_Container`` picks ``imagePullPolicy`` from the image's tag, which it finds
with the distribution reference grammar (``github.com/distribution/reference``,
``ParseNormalizedNamed``): an image with no tag and no digest is ``:latest``; one upstream
cannot parse has no tag at all.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_HOST = rf"(?:{_DOMAIN_NAME}|{_IPV6})"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_IDENTIFIER = re.compile(r"[a-f0-9]{64}")
_NAME_TOTAL_LENGTH_MAX = 255
_LEGACY_DEFAULT_DOMAIN = "index.docker.io"
_DEFAULT_DOMAIN = "docker.io"
_OFFICIAL_REPO_PREFIX = "library/"


class ImageName(NamedTuple):
    """What ``ParseImageName`` returns: repository (normalized), tag, digest."""

    repository: str
    tag: str
    digest: str


def _split_docker_domain(name: str) -> tuple[str, str]:
    # reference.splitDockerDomain: the first component is a domain when it holds a '.' or
    # a ':', is "localhost", or has an upper-case letter.
    first, sep, rest = name.partition("/")
    if not sep or (first != "localhost" and "." not in first and ":" not in first
                   and first.lower() == first):
        domain, remainder = _DEFAULT_DOMAIN, name
    else:
        domain, remainder = first, rest
    if domain == _LEGACY_DEFAULT_DOMAIN:
        domain = _DEFAULT_DOMAIN
    if domain == _DEFAULT_DOMAIN and "/" not in remainder:
        remainder = _OFFICIAL_REPO_PREFIX + remainder
    return domain, remainder


def parse_image_name(image: str) -> ImageName | None:
    """``parsers.ParseImageName``: ``None`` where upstream returns an error; a reference
    with neither tag nor digest gets the tag ``latest``."""
    if _IDENTIFIER.fullmatch(image):
        return None  # a bare image ID is not a repository name
    domain, remainder = _split_docker_domain(image)
    remote_name = remainder.split(":", 1)[0]
    if remote_name.lower() != remote_name:
        return None  # repository name must be lowercase
    match = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if match is None:
        return None
    name, tag, digest = match.group(1), match.group(2) or "", match.group(3) or ""
    if len(name) > _NAME_TOTAL_LENGTH_MAX:
        return None
    if not tag and not digest:
        tag = "latest"
    return ImageName(name, tag, digest)


def default_pull_policy(image: str) -> str:
    """``Always`` for ``:latest`` (or no tag and no digest), else ``IfNotPresent``."""
    parsed = parse_image_name(image)
    return "Always" if parsed is not None and parsed.tag == "latest" else "IfNotPresent"
