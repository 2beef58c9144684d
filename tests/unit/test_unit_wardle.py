"""Unit tests of the example extension server's kinds (sample-apiserver's wardle)."""

from kapiserver_plugins.wardle.resources import FLUNDERS, FlunderStrategy


def flunder(spec):
    return {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
            "metadata": {"name": "f", "namespace": "demo"}, "spec": spec}


def prepared(spec):
    strategy = FlunderStrategy(FLUNDERS)
    obj = flunder(spec)
    strategy.apply_defaults(obj)
    strategy.prepare_for_create(obj)
    return obj, [str(e) for e in strategy.validate(obj)]


def test_a_reference_defaults_to_a_flunder():
    obj, errors = prepared({"reference": "other"})
    assert obj["spec"] == {"reference": "other", "referenceType": "Flunder"} and errors == []


def test_a_reference_type_needs_a_reference_named_as_upstream_names_it():
    assert prepared({"referenceType": "Fischer"})[1] == [
        "spec.fischerReference: Required value: cannot be empty if referenceType is Fischer"]
    assert prepared({"referenceType": "Flunder"})[1] == [
        "spec.flunderReference: Required value: cannot be empty if referenceType is Flunder"]


def test_an_unknown_reference_type_is_dropped_as_upstream_conversion_drops_it():
    obj, errors = prepared({"reference": "x", "referenceType": "Other"})
    assert obj["spec"] == {} and errors == []


def test_names_need_only_be_path_segments():
    assert prepared({})[1] == []
    obj = flunder({})
    obj["metadata"]["name"] = "Not_A_DNS_Name"
    assert FlunderStrategy(FLUNDERS).validate(obj) == []
    obj["metadata"]["name"] = "a/b"
    assert [str(e) for e in FlunderStrategy(FLUNDERS).validate(obj)] == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"]
