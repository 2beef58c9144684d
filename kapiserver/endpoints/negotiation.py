"""Content negotiation of responses, as kube-apiserver does it in two steps.

1. The route: a built-in resource's route produces JSON, YAML and protobuf (and their
   ``;stream=watch`` forms for list and watch); an ``Accept`` naming none of them (nor
   ``*/*``) is refused with go-restful's 406 ``Available representations: …``.
2. ``NegotiateOutputMediaType``: the ``Accept`` clauses, best first (goautoneg's order:
   quality, then concrete before wildcard types), are tried against the serializers the
   endpoint has; a clause's ``as``/``g``/``v`` parameters ask for another representation
   (``Table`` — JSON or YAML only — or ``PartialObjectMetadata[List]`` — any), ``stream``
   for a watch stream, ``pretty`` for indentation. The first clause the endpoint can serve
   wins; none → 406 ``only the following media types are accepted: …``.

An empty ``Accept`` means JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import errors

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
#: Serializers of built-in kinds, in upstream's order (the first is the default).
BUILTIN_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
#: Custom resources, aggregated kinds without protobuf schemas: JSON and YAML.
UNSTRUCTURED_MEDIA_TYPES = (JSON, YAML)
META_GROUPS = ("meta.k8s.io",)
META_VERSIONS = ("v1", "v1beta1")
CONVERSIONS = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")


@dataclass(frozen=True)
class Clause:
    """One media range of an ``Accept`` header."""

    type: str
    subtype: str
    params: tuple
    q: float

    def param(self, name: str, default: str = "") -> str:
        for key, value in self.params:
            if key == name:
                return value
        return default


@dataclass(frozen=True)
class MediaType:
    """What to answer with: a serializer's media type, and the requested conversion
    (``as`` kind with its group and version; ``""`` for the object itself)."""

    media: str
    convert: str = ""
    group: str = ""
    version: str = ""
    pretty: bool = False
    stream: str = ""

    @property
    def protobuf(self) -> bool:
        return self.media == PROTOBUF

    @property
    def yaml(self) -> bool:
        return self.media == YAML


DEFAULT = MediaType(JSON)


def parse_accept(header: str) -> list[Clause]:
    """goautoneg's ``ParseAccept``: the clauses sorted best first (stable)."""
    clauses = []
    for part in header.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        if not media:
            continue
        kind, _, subtype = media.partition("/")
        if not subtype:
            kind, subtype = (kind, "*") if kind == "*" else (kind, "")
        q, kept = 1.0, []
        for param in params:
            key, _, value = param.partition("=")
            key, value = key.strip(), value.strip()
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            elif key:
                kept.append((key, value))
        clauses.append(Clause(kind.lower(), subtype.lower(), tuple(kept), q))
    # Python's sort is stable; goautoneg's sort.Sort is not, but clauses comparing equal
    # are rare and never differ in what they select here.
    clauses.sort(key=lambda c: (-c.q, c.type == "*", c.subtype == "*"))
    return clauses


def route_accepts(header: str, produces=BUILTIN_MEDIA_TYPES) -> bool:
    """go-restful's ``matchesAccept``: some clause names a type the route produces
    (parameters ignored) or is ``*/*``."""
    if not header:
        return True
    for part in header.split(","):
        bare = part.split(";")[0].strip()
        if bare == "*/*" or bare in produces:
            return True
    return False


def route_not_acceptable(stream: bool, produces=BUILTIN_MEDIA_TYPES) -> errors.NotAcceptable:
    """go-restful's 406, as kube-apiserver wraps it in a Status."""
    available = list(produces)
    if stream:
        available += [f"{m};stream=watch" for m in produces if m != YAML]
    return errors.NotAcceptable("406: Not Acceptable\n\nAvailable representations: "
                                + ", ".join(available), {})


def not_acceptable() -> errors.NotAcceptable:
    """``negotiation.NewNotAcceptableError``: it names the serializers of the server's
    codecs (protobuf too, even for a custom resource, which cannot be encoded in it)."""
    return errors.NotAcceptable("only the following media types are accepted: "
                                + ", ".join(BUILTIN_MEDIA_TYPES), {})


def _allows(media: str, convert: str, group: str, table: bool, partial: bool,
            media_types) -> bool:
    """``RequestScope.AllowsMediaTypeTransform``."""
    if not convert and not group:
        return media in media_types
    if group not in META_GROUPS:
        return False
    if convert == "Table":
        return table and media in (JSON, YAML)
    if convert in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        return partial
    return False


def negotiate(header: str, media_types=BUILTIN_MEDIA_TYPES, *, table: bool = True,
              partial: bool = True, stream: bool = False) -> MediaType:
    """The representation to answer ``header`` with (``NotAcceptable`` when none fits).

    ``media_types``: the endpoint's serializers; ``table``: it converts to Tables;
    ``partial``: to PartialObjectMetadata; ``stream``: a watch (``stream=watch`` allowed).
    """
    if not header:
        return MediaType(media_types[0])
    for clause in parse_accept(header):
        for media in BUILTIN_MEDIA_TYPES:
            kind, subtype = media.split("/")
            if not ((clause.type == kind and clause.subtype in (subtype, "*"))
                    or (clause.type == "*" and clause.subtype == "*")):
                continue
            if media not in media_types and not clause.param("as"):
                continue
            chosen = _accept(clause, media, media_types, table, partial, stream)
            if chosen is not None:
                return chosen
    raise not_acceptable()


def _accept(clause: Clause, media: str, media_types, table: bool, partial: bool,
            stream: bool) -> MediaType | None:
    """``acceptMediaTypeOptions``: ``None`` when the clause's parameters cannot be met."""
    convert = group = version = stream_kind = ""
    pretty = False
    converting = False
    for key, value in clause.params:
        if key == "as":
            convert, converting = value, True
        elif key == "g":
            group, converting = value, True
        elif key == "v":
            version, converting = value, True
        elif key == "stream":
            if value and (value != "watch" or media == YAML or not stream):
                return None
            stream_kind = value
        elif key == "pretty":
            pretty = value == "1"
    if converting and not _allows(media, convert, group, table, partial, media_types):
        return None
    if not converting and media not in media_types:
        return None
    if converting and version not in META_VERSIONS:
        return None
    return MediaType(media, convert, group, version, pretty, stream_kind)
