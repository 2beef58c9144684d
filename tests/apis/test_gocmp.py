"""go-cmp's Diff as kapiserver reproduces it (kapiserver.apis.core.gocmp)."""

from types import SimpleNamespace

import pytest

from kapiserver.apis.core import gocmp
from kapiserver.apis.core.gocmp import (BOOL, INT, MAP, PTR, SLICE, STRING, STRUCT, DiffStats,
                                        GoType, difference)


def report(text):
    """A go-cmp report with its no-break spaces shown as plain spaces."""
    return text.replace("\u00a0", " ")


def struct(name, **fields):
    t = GoType(STRUCT, name, named=not name.startswith("struct{"))
    t.fields = list(fields.items())
    return t


INT_T, STRING_T = GoType(INT, "int"), GoType(STRING, "string")


# -- the edit script --------------------------------------------------------------------------

def _script(x, y):
    def compare(ix, iy):
        a, b = x[ix], y[iy]
        if a == b:
            return SimpleNamespace(num_same=1, num_diff=0)
        if a.upper() == b.upper():
            return SimpleNamespace(num_same=0, num_diff=1)
        return SimpleNamespace(num_same=0, num_diff=2)
    edits = difference(len(x), len(y), compare)
    return "".join(".XYM"[e] for e in edits)


@pytest.mark.parametrize("x, y, want", [
    ("", "", ""),
    ("#", "#", "."),
    ("##", "# ", ".X|X."),
    ("a#", "A ", "MX"),
    (" #", "@#", "Y."),
    ("##########0123456789", "          0123456789", "XXXXXXXXXX.........."),
    ("01234##########56789", "01234          56789", ".....XXXXXXXXXX....."),
    ("abcdefghij0123456789", "ABCDEFGHIJ0123456789", "MMMMMMMMMM.........."),
    ("ABCDE0123456789     FGHIJ", "     0123456789abcdefghij", "XXXXX..........YYYYYMMMMM"),
    ("ABCAB BA ", "  C BABAC", "XX.X.Y..Y|XX.Y.X..Y"),
    ("###z#z###### x  #", "#y##Z#Z###### yy#", ".Y..M.M......XYY."),
    ("x1234xxab.", " 1234  AB ", "X....XXMMX"),
    (" 0123456789", "9012345678 ", "Y.........X"),
    ("0123456789     ", "     5678901234", "XXXXX.....YYYYY|YYYYY.....XXXXX"),
    ("0 1 2345678 9   ", " 6 72  5  819034", "XYXY.XX.XX.Y.YYY"),
    ("F B Q M O    I G T L       N72X90 E  4S P  651HKRJU DA 83CVZW",
     " 5 W H XO10R9IV K ZLCTAJ8P3N     SEQM4 7 2G6      UBD F      ",
     "XYXYXYXY.YYYY.YXYXY.YYYYYYY.XXXXXY.YY.XYXYY.XXXXXX.Y.XYXXXXXX"),
])
def test_difference_matches_go_cmp(x, y, want):
    # go-cmp's own test vectors: spaces mark a missing symbol
    assert _script(x.replace(" ", ""), y.replace(" ", "")) in want.split("|")


# -- reports ------------------------------------------------------------------------------------

def test_struct_inequal():
    t = struct("struct{ A int; B int; C int }", A=INT_T, B=INT_T, C=INT_T)
    assert report(gocmp.diff(t, (1, 2, 3), (1, 2, 4))) == (
        "  struct{ A int; B int; C int }{\n"
        "  \tA: 1,\n"
        "  \tB: 2,\n"
        "- \tC: 3,\n"
        "+ \tC: 4,\n"
        "  }\n")


def test_pointer_struct_inequal():
    inner = struct("struct{ A *int }", A=GoType(PTR, "*int", elem=INT_T))
    t = GoType(PTR, "*struct{ A *int }", elem=inner)
    assert report(gocmp.diff(t, (4,), (5,))) == (
        "  &struct{ A *int }{\n"
        "- \tA: &4,\n"
        "+ \tA: &5,\n"
        "  }\n")


def test_triple_pointer_inequal():
    t = GoType(PTR, "***int", elem=GoType(PTR, "**int", elem=GoType(PTR, "*int", elem=INT_T)))
    assert report(gocmp.diff(t, 0, 1)) == "  &&&int(\n- \t0,\n+ \t1,\n  )\n"


def test_empty_slices_against_nil():
    def slice_of(name, elem, named=False):
        return GoType(SLICE, name, named=named, elem=GoType(INT, elem))
    fields = {"StringA": STRING_T, "StringB": STRING_T,
              "BytesA": slice_of("[]uint8", "uint8"),
              "BytesB": slice_of("[]cmp_test.MyByte", "cmp_test.MyByte"),
              "BytesC": slice_of("cmp_test.MyBytes", "cmp_test.MyByte", named=True),
              "IntsA": slice_of("[]int8", "int8")}
    t = struct("cmp_test.MyComposite", **fields)
    x = ("", "", [], [], [], [])
    y = ("", "", None, None, None, None)
    assert report(gocmp.diff(t, x, y)) == (
        "  cmp_test.MyComposite{\n"
        '  \tStringA: "",\n'
        '  \tStringB: "",\n'
        "- \tBytesA:  []uint8{},\n"
        "+ \tBytesA:  nil,\n"
        "- \tBytesB:  []cmp_test.MyByte{},\n"
        "+ \tBytesB:  nil,\n"
        "- \tBytesC:  cmp_test.MyBytes{},\n"
        "+ \tBytesC:  nil,\n"
        "- \tIntsA:   []int8{},\n"
        "+ \tIntsA:   nil,\n"
        "  }\n")


def test_map_of_slices_with_reordered_elements():
    germ = GoType(STRING, "*testprotos.Germ", stringer=True)
    germs = GoType(SLICE, "[]*testprotos.Germ", elem=germ)
    int32 = GoType(INT, "int32")
    fields = {"DirtyGerms": GoType(MAP, "map[int32][]*testprotos.Germ", key=int32, elem=germs),
              "CleanGerms": GoType(MAP, "map[int32][]*testprotos.Germ", key=int32, elem=germs),
              "GermMap": GoType(MAP, "map[int32]*testprotos.Germ", key=int32, elem=germ)}
    fields.update({f"F{i}": BOOL_T for i in range(7)})
    t = struct("teststructs.GermBatch", **fields)
    germ_map = {13: "germ13", 21: "germ21"}
    x = ({17: ["germ1"], 18: ["germ2", "germ3", "germ4"]}, None, germ_map) + (False,) * 7
    y = ({17: ["germ1"], 18: ["germ3", "germ4", "germ2"]}, None, germ_map) + (False,) * 7
    assert report(gocmp.diff(t, x, y)) == (
        "  teststructs.GermBatch{\n"
        "  \tDirtyGerms: map[int32][]*testprotos.Germ{\n"
        '  \t\t17: {s"germ1"},\n'
        "  \t\t18: {\n"
        '- \t\t\ts"germ2",\n'
        '  \t\t\ts"germ3",\n'
        '  \t\t\ts"germ4",\n'
        '+ \t\t\ts"germ2",\n'
        "  \t\t},\n"
        "  \t},\n"
        "  \tCleanGerms: nil,\n"
        '  \tGermMap:    {13: s"germ13", 21: s"germ21"},\n'
        "  \t... // 7 identical fields\n"
        "  }\n")


BOOL_T = GoType(BOOL, "bool")


def test_equal_values_have_no_diff():
    t = struct("pkg.T", A=INT_T)
    assert gocmp.diff(t, (1,), (1,)) == ""


def test_indentation_uses_no_break_spaces():
    t = struct("pkg.T", A=INT_T)
    assert gocmp.diff(t, (1,), (2,)) == (
        "\u00a0\u00a0pkg.T{\n-\u00a0\tA: 1,\n+\u00a0\tA: 2,\n\u00a0\u00a0}\n")


@pytest.mark.parametrize("stats, text", [
    (DiffStats("field", identical=1), "1 identical field"),
    (DiffStats("field", identical=27), "27 identical fields"),
    (DiffStats("entry", removed=2), "2 removed entries"),
    (DiffStats("element", ignored=1, identical=2), "1 ignored and 2 identical elements"),
    (DiffStats("element", removed=1, inserted=2, modified=3),
     "1 removed, 2 inserted, and 3 modified elements"),
])
def test_diff_stats(stats, text):
    assert str(stats) == text


@pytest.mark.parametrize("value, shown", [
    ("plain", '"plain"'),
    ('say "hi"', '`say "hi"`'),
    ("tab\there", "`tab\there`"),  # a tab is printable enough for back quotes
    ("new\nline", '"new\\nline"'),
    ("back`tick\"", '"back`tick\\""'),
])
def test_strings_are_quoted_or_backquoted(value, shown):
    assert gocmp.format_string(value) == shown


def test_long_strings_are_cut_at_the_verbosity_limit():
    t = struct("pkg.T", S=STRING_T, N=INT_T)
    long = "x" * 300
    text = report(gocmp.diff(t, (long, 1), (long, 2)))
    assert '  \tS: "' + "x" * 64 + '"...,\n' in text


def test_many_identical_elements_are_elided():
    t = GoType(SLICE, "[]int", elem=INT_T)
    text = report(gocmp.diff(t, list(range(10)), list(range(9)) + [99]))
    assert text == ("  []int{\n"
                    "  \t... // 7 identical elements\n"
                    "  \t7,\n"
                    "  \t8,\n"
                    "- \t9,\n"
                    "+ \t99,\n"
                    "  }\n")


def test_semantic_equality_treats_nil_and_empty_alike():
    t = struct("pkg.T", L=GoType(SLICE, "[]int", elem=INT_T),
               M=GoType(MAP, "map[string]int", key=STRING_T, elem=INT_T),
               P=GoType(PTR, "*int", elem=INT_T))
    assert gocmp.semantic_equal(t, (None, None, None), ([], {}, None))
    assert not gocmp.semantic_equal(t, (None, None, None), (None, None, 0))
    assert gocmp.diff(t, (None, None, None), ([], {}, None)) != ""


# -- long strings: go-cmp's own report examples -------------------------------------------------

def _string_report(x, y):
    return report(gocmp.diff(STRING_T, x, y))


def test_all_lines_differ():
    lines = ["d5c14bdf6bac81c27afc5429500ed750", "25483503b557c606dad4f144d27ae10b",
             "90bdbcdbb6ea7156068e3dcfb7459244", "978f480a6e3cced51e297fbff9a506b7"]
    x = "".join(line + "\n" for line in lines)
    y = "".join("X" + line + "\n" for line in lines)
    assert _string_report(x, y) == "  strings.Join({\n" + "".join(
        f'+ \t"X",\n  \t"{line}\\n",\n' for line in lines) + '  }, "")\n'


def test_short_json_is_triple_quoted():
    x = '{\n\t"id": 1,\n\t"foo": true,\n\t"bar": true,\n}'
    y = '{\n\t"id": 1434180,\n\t"foo": true,\n\t"bar": true,\n}'
    assert _string_report(x, y) == (
        "  (\n"
        '  \t"""\n'
        "  \t{\n"
        '- \t\t"id": 1,\n'
        '+ \t\t"id": 1434180,\n'
        '  \t\t"foo": true,\n'
        '  \t\t"bar": true,\n'
        "  \t}\n"
        '  \t"""\n'
        "  )\n")


def test_surrounding_equal_elements():
    parts = [("a", "aa", "2 11"), ("a", "bb", "2 21"), ("b", "cc", "1 21"), ("a", "dd", "3 31")]
    prefix = "org-4747474747474747,bucket-4242424242424242:m,tag1="
    x = "".join(f"{prefix}{t1},tag2={t2},#=_value _value={v}\t" for t1, t2, v in parts)
    y = "".join(f"{prefix}{t1},tag2={t2} _value={v}\t" for t1, t2, v in parts)
    x += f"{prefix}c,#=_value _value=4 41\t"
    y += f"{prefix}c _value=4 41\t"
    assert _string_report(x, y) == (
        "  strings.Join({\n"
        '  \t"org-4747474747474747,bucket-4242424242424242:m,tag1=a,tag2=aa",\n'
        '- \t",#=_value",\n'
        "  \t` _value=2 11\torg-4747474747474747,bucket-4242424242424242:m,tag1`,\n"
        '  \t"=a,tag2=bb",\n'
        '- \t",#=_value",\n'
        "  \t` _value=2 21\torg-4747474747474747,bucket-4242424242424242:m,tag1`,\n"
        '  \t"=b,tag2=cc",\n'
        '- \t",#=_value",\n'
        "  \t` _value=1 21\torg-4747474747474747,bucket-4242424242424242:m,tag1`,\n"
        '  \t"=a,tag2=dd",\n'
        '- \t",#=_value",\n'
        "  \t` _value=3 31\torg-4747474747474747,bucket-4242424242424242:m,tag1`,\n"
        '  \t"=c",\n'
        '- \t",#=_value",\n'
        "  \t` _value=4 41\t`,\n"
        '  }, "")\n')


def test_string_differences_are_limited():
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    x = "".join(ch + "\n" for ch in letters)
    y = "".join((ch * 2 if i % 2 == 0 else ch) + "\n" for i, ch in enumerate(letters))
    text = _string_report(x, y)
    assert text.startswith('  (\n  \t"""\n- \ta\n+ \taa\n  \tb\n- \tc\n+ \tcc\n')
    assert text.endswith("- \tE\n+ \tEE\n"
                         "  \t... // 12 identical, 10 removed, and 10 inserted lines\n"
                         '  \t"""\n  )\n')


def test_a_one_element_slice_is_shown_whole_as_removed_and_inserted():
    from kapiserver.apis.core import gotypes
    old = {"containers": [{"name": "c", "image": "i", "args": [
        "--config=/etc/app/config.yaml --verbose --log-level=info"]}]}
    new = {"containers": [{"name": "c", "image": "i", "args": [
        "--config=/etc/app/config.yaml --verbose --log-level=debug"]}]}
    text = report(gotypes.pod_spec_diff(old, new))
    assert ('- \t\t\tArgs:       []string{"--config=/etc/app/config.yaml --verbose'
            ' --log-level=info"},\n') in text
    assert ('+ \t\t\tArgs:       []string{"--config=/etc/app/config.yaml --verbose'
            ' --log-level=debug"},\n') in text


def test_long_strings_inside_a_pod_spec_diff():
    from kapiserver.apis.core import gotypes
    old = {"containers": [{"name": "c", "image": "i", "args": [
        "-v", "--config=/etc/app/config.yaml --verbose --log-level=info"]}]}
    new = {"containers": [{"name": "c", "image": "i", "args": [
        "-v", "--config=/etc/app/config.yaml --verbose --log-level=debug"]}]}
    text = report(gotypes.pod_spec_diff(old, new))
    assert ("  \t\t\tArgs: []string{\n"
            '  \t\t\t\t"-v",\n'
            "  \t\t\t\tstrings.Join({\n"
            '  \t\t\t\t\t"--config=/etc/app/config.yaml --verbose --log-level=",\n'
            '- \t\t\t\t\t"info",\n'
            '+ \t\t\t\t\t"debug",\n'
            '  \t\t\t\t}, ""),\n'
            "  \t\t\t},\n") in text
