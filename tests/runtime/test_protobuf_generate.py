"""protobuf_generate: tables from Go and proto sources, checked against each other, and the
shipped tables are upstream's."""

import json
import pathlib

import pytest

from kapiserver.runtime import protobuf_generate as gen
from kapiserver.runtime import protobuf_schemas as schemas
from kapiserver.runtime.protobuf_sources import GenerateError, GoPackage, Source, parse_proto

REFERENCE = pathlib.Path("/work/shared/reference")
TEST = "k8s.io/api/test/v1"
INTSTR = "k8s.io/apimachinery/pkg/util/intstr"

GO = '''package v1

import (
\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
\t"k8s.io/apimachinery/pkg/util/intstr"
)

// Mode is a named string; its comment has `backticks` and json:"tags" in it.
type Mode string

type Modes []Mode

type (
\tLimits map[Mode]Mode
\tExtra []string
)

// +genclient
type Widget struct {
\tmetav1.TypeMeta `json:",inline"`

\t// Spec is the spec.
\tSpec WidgetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
\tPort *intstr.IntOrString `json:"port,omitempty" protobuf:"bytes,1,opt,name=port"`
}

type WidgetSpec struct {
\tName string `json:"name" protobuf:"bytes,3,opt,name=name"`
\tSource `json:",inline" protobuf:"bytes,1,opt,name=source"`
\tModes Modes `json:"modes,omitempty" protobuf:"bytes,2,rep,name=modes,casttype=Mode"`
\tLimits Limits `json:"limits,omitempty" protobuf:"bytes,4,rep,name=limits"`
\tExtra map[string]Extra `json:"extra,omitempty" protobuf:"bytes,5,rep,name=extra"`
\tRatio *float64 `json:"ratio" protobuf:"bytes,6,opt,name=ratio"`
\tData []byte `json:"data,omitempty" protobuf:"bytes,7,opt,name=data"`
}

type Source struct {
\tPath *Mode `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
}

func (w *Widget) DeepCopy() *Widget {
\ttype local struct{ x int }
\treturn w
}
'''

PROTO = '''syntax = "proto2";
package k8s.io.api.test.v1;

// Widget is a widget.
message Widget {
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString port = 1;
  optional WidgetSpec spec = 2;
}

message WidgetSpec {
  optional Source source = 1;
  repeated string modes = 2;
  optional string name = 3;
  map<string, string> limits = 4;
  map<string, Extra> extra = 5;
  optional double ratio = 6;
  optional bytes data = 7;
}

message Source {
  optional string path = 1;
}

message Extra {
  // items, and nothing else
  repeated string items = 1;
}
'''

INTSTR_GO = '''package intstr

type IntOrString struct {
\tType   Type   `protobuf:"varint,1,opt,name=type,casttype=Type"`
\tIntVal int32  `protobuf:"varint,2,opt,name=intVal"`
\tStrVal string `protobuf:"bytes,3,opt,name=strVal"`
}

func (intstr IntOrString) MarshalJSON() ([]byte, error) {
\treturn nil, nil
}
'''
INTSTR_PROTO = 'package k8s.io.apimachinery.pkg.util.intstr;\nmessage IntOrString {}\n'


class FakeSource(Source):
    """Sources held in memory: import path -> (Go files, generated.proto)."""

    def __init__(self, packages):
        super().__init__("/nowhere", "v0")
        self.packages = packages

    def go_files(self, import_path):
        return self.packages[import_path][0]

    def proto(self, import_path):
        return self.packages[import_path][1]


def generate(go=GO, proto=PROTO):
    source = FakeSource({TEST: ([go], proto), INTSTR: ([INTSTR_GO], INTSTR_PROTO)})
    return gen.Generator(source).run({"test.example.com/v1": (TEST, ("Widget",))}, ())


def test_tables_follow_the_go_struct_and_the_proto():
    tables = generate()
    assert tables["kinds"] == {"test.example.com/v1": ["test/v1", ["Widget"]]}
    assert tables["meta_kinds"] == []
    assert tables["messages"]["test/v1"] == {
        "Source": {"1": ["path", "*string"]},
        "Widget": {"2": ["spec", "WidgetSpec", "keep"], "1": ["port", "*IntOrString"]},
        "WidgetSpec": {
            "3": ["name", "string", "keep"],
            "1": ["source", "Source", "inline"],
            "2": ["modes", "[]string"],
            "4": ["limits", "map[string]string"],
            "5": ["extra", "map[string]ExtraValue"],
            "6": ["ratio", "*double", "keep"],
            "7": ["data", "bytes"],
        },
    }


def test_the_go_layout_is_what_reflect_prints():
    layout = generate()["go"]
    assert layout["packages"] == {"test/v1": TEST}
    assert layout["structs"]["test/v1"] == {
        "Source": ["v1.Source", {"1": ["Path", "*v1.Mode"]}],
        "Widget": ["v1.Widget", {"2": ["Spec", "v1.WidgetSpec"],
                                 "1": ["Port", "*intstr.IntOrString"]}],
        "WidgetSpec": ["v1.WidgetSpec", {
            "3": ["Name", "string"], "1": ["Source", "v1.Source", "embedded"],
            "2": ["Modes", "v1.Modes"], "4": ["Limits", "v1.Limits"],
            "5": ["Extra", "map[string]v1.Extra"], "6": ["Ratio", "*float64"],
            "7": ["Data", "[]uint8"]}],
    }
    assert layout["named"] == {TEST: {"Extra": "[]string", "Limits": "map[v1.Mode]v1.Mode",
                                      "Mode": "string", "Modes": "[]v1.Mode"}}
    assert layout["refs"][TEST]["intstr.IntOrString"] == INTSTR
    assert layout["refs"][TEST]["v1.Mode"] == TEST


def test_a_name_reflect_prints_for_two_types_of_one_package_fails():
    other = "k8s.io/api/other/v1"
    go = GO.replace('\t"k8s.io/apimachinery/pkg/util/intstr"',
                    '\t"k8s.io/apimachinery/pkg/util/intstr"\n\tother "k8s.io/api/other/v1"')
    go = go.replace("Path *Mode `", "Path *other.Mode `")
    source = FakeSource({TEST: ([go.replace("type Modes []Mode", "type Modes []Mode\n")],
                                PROTO),
                         INTSTR: ([INTSTR_GO], INTSTR_PROTO),
                         other: (["package v1\n\ntype Mode string\n"], "package x;\n")})
    with pytest.raises(GenerateError, match="Go type v1.Mode names types of"):
        gen.Generator(source).run({"test.example.com/v1": (TEST, ("Widget",))}, ())


def test_the_core_go_layout_gives_apis_core_gotypes_data():
    """``kapiserver.apis.core.gotypes_data`` (source spellings, relative to core/v1) is
    derived from the shipped ``go`` section: a field is (Go name, JSON name or "" when
    inline, Go type with core/v1's own types unqualified, metav1's as ``metav1.``, embedded),
    ``ALIASES`` the ``named`` types of core/v1."""
    import re

    gotypes_data = pytest.importorskip("kapiserver.apis.core.gotypes_data")
    core = "k8s.io/api/core/v1"
    aliases = {"k8s.io/apimachinery/pkg/apis/meta/v1": "metav1.", core: "",
               "k8s.io/apimachinery/pkg/api/resource": "resource.",
               "k8s.io/apimachinery/pkg/util/intstr": "intstr.",
               "k8s.io/apimachinery/pkg/types": "types."}
    layout, messages = schemas.GO, schemas.MESSAGES["core/v1"]

    def spelled(text: str) -> str:
        refs = layout["refs"][core]
        text = re.sub(r"\b\w+\.(\w+)\b",
                      lambda m: aliases[refs[m.group(0)]] + m.group(1), text)
        return text.replace("[]uint8", "[]byte")

    structs = {name: tuple((go_name, "" if "inline" in messages[name][int(n)][2:]
                            else messages[name][int(n)][0], spelled(go_type),
                            "embedded" in flags)
                           for n, (go_name, go_type, *flags) in fields.items())
               for name, (_, fields) in layout["structs"]["core/v1"].items()}
    assert {name: structs[name] for name in gotypes_data.STRUCTS} == gotypes_data.STRUCTS
    named = {name: spelled(text) for name, text in layout["named"][core].items()}
    assert {name: named[name] for name in gotypes_data.ALIASES} == gotypes_data.ALIASES


@pytest.mark.parametrize("go, proto, message", [
    (GO, PROTO.replace("string name = 3", "string name = 8"),
     "test/v1.WidgetSpec.Name: proto has no field 3"),
    (GO, PROTO.replace("string name = 3", "string title = 3"),
     "Go names field 3 'name', the proto 'title'"),
    (GO, PROTO.replace("repeated string modes", "optional string modes"),
     "a Go slice, a proto optional"),
    (GO, PROTO.replace("optional bytes data = 7;", "optional bytes data = 7; optional bool x = 9;"
                       .replace("; o", ";\n  o")),
     "test/v1.WidgetSpec: proto fields [9] have no Go field"),
    (GO, PROTO.replace("optional double ratio", "optional float ratio"),
     "Go double, proto k8s.io.api.test.v1.float"),
    (GO.replace("type Source struct", "func (s Source) MarshalJSON() {}\n\ntype Source struct"),
     PROTO, "Source marshals itself to JSON"),
    (GO.replace('`json:"name" protobuf', '`protobuf'), PROTO, "WidgetSpec.Name: no JSON name"),
    (GO.replace(' protobuf:"bytes,3,opt,name=name"', ""), PROTO, "WidgetSpec.Name: no protobuf"),
    (GO, PROTO.replace("optional string path = 1;", "optional string path = 1 [deprecated];"),
     "cannot read 'optional string path = 1 [deprecated];'"),
])
def test_any_disagreement_fails_loudly(go, proto, message):
    with pytest.raises(GenerateError) as caught:
        generate(go, proto)
    assert message in str(caught.value)


def test_go_declarations_and_proto_messages_are_read():
    package = GoPackage(TEST, [GO])
    assert package.named["Limits"] == ("map", ("named", TEST, "Mode"), ("named", TEST, "Mode"))
    assert package.named["Modes"] == ("slice", ("named", TEST, "Mode"))
    assert [f.go_name for f in package.structs["WidgetSpec"]][:2] == ["Name", "Source"]
    assert "local" not in package.structs  # a function's own types are not the package's
    package_name, messages = parse_proto(PROTO)
    assert package_name == "k8s.io.api.test.v1"
    assert messages["Widget"][1].type == "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
    assert (messages["WidgetSpec"][5].label, messages["WidgetSpec"][5].value_type) == (
        "map", "k8s.io.api.test.v1.Extra")


MIRRORS = pathlib.Path(gen.MIRRORS)


@pytest.mark.skipif(not all((MIRRORS / mirror / "repo").is_dir()
                            for mirror in gen.MODULES.values()),
                    reason="upstream's mirrors are not on this machine")
def test_the_shipped_tables_are_what_upstream_generates():
    generated = gen.Generator(Source(gen.MIRRORS, gen.TAG)).run()
    shipped = json.loads(gen.OUTPUT.read_text())
    assert generated == shipped, "run python -m kapiserver.runtime.protobuf_generate"


def discovered():
    """(apiVersion, kind) of every resource and subresource of kube-apiserver 1.32's
    aggregated discovery, the options of connect subresources left out."""
    for name in ("aggregated-discovery-api.json", "aggregated-discovery-apis.json"):
        document = json.loads((REFERENCE / name).read_text())
        for group in document["response"]["body"]["items"]:
            for version in group["versions"]:
                for resource in version["resources"]:
                    kinds = [resource["responseKind"]] + [
                        sub["responseKind"] for sub in resource.get("subresources", ())]
                    for kind in kinds:  # an empty group and version are the resource's
                        group_version = (kind["group"] or group["metadata"].get("name", ""),
                                         kind["version"] or version["version"])
                        api_version = "/".join(filter(None, group_version))
                        if not kind["kind"].endswith("Options"):
                            yield api_version, kind["kind"]


def test_every_kind_kube_apiserver_serves_is_in_the_tables():
    served = {(api_version, kind) for api_version, (_, kinds) in schemas.KINDS.items()
              for kind in kinds}
    wanted = set(discovered())
    assert len(wanted) > 60
    assert wanted - served == set()
    lists = {(api_version, kind + "List") for api_version, kind in wanted
             if kind not in ("Binding", "Scale", "Eviction", "TokenRequest", "TokenReview",
                             "SelfSubjectReview") and not kind.endswith("Review")}
    assert lists - served == set()
