"""The CEL libraries' function declarations: typed overloads for cel-cpp's checker and one
overload per runtime signature implemented by ``library.Runtime`` (see ``library``'s
docstring for why each function is declared twice), and cel-go's cross-type numeric
comparisons, which replace the standard library's.
"""

from __future__ import annotations

from . import format_library
from .library import LibraryError, Runtime


_ORDERED = ("int", "uint", "double", "bool", "string", "bytes", "duration", "timestamp")
_SUMMABLE = ("int", "uint", "double", "duration")
_NUMERIC_IDS = {"int": "int64", "uint": "uint64", "double": "double"}
_COMPARISON_OPS = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater",
                   "_>=_": "greater_equals"}
_COMPARISON_TYPES = {"bool": "bool", "int": "int64", "uint": "uint64", "double": "double",
                     "string": "string", "bytes": "bytes", "timestamp": "timestamp",
                     "duration": "duration"}
#: ``string()``'s standard overloads: the checker redeclares them with the ip and cidr ones
#: (cel-cpp refuses a second declaration of a standard function); the runtime keeps them.
_STRING_CONVERSIONS = {"string_to_string": "string", "bool_to_string": "bool",
                       "int64_to_string": "int", "uint64_to_string": "uint",
                       "double_to_string": "double", "bytes_to_string": "bytes",
                       "timestamp_to_string": "timestamp", "duration_to_string": "duration"}
EXCLUDED_STDLIB = (*_COMPARISON_OPS, "string")


def _types():
    from cel_expr_python import cel

    T = cel.Type
    return T, {"int": T.INT, "uint": T.UINT, "double": T.DOUBLE, "bool": T.BOOL,
               "string": T.STRING, "bytes": T.BYTES, "duration": T.DURATION,
               "timestamp": T.TIMESTAMP, "dyn": T.DYN, "URL": T("kubernetes.URL"),
               "Quantity": T("kubernetes.Quantity"), "IP": T("net.IP"), "CIDR": T("net.CIDR"),
               "NamedFormat": T(format_library.TYPE)}


def checker_declarations() -> list:
    """The functions the checker knows: typed overloads, no implementations."""
    from cel_expr_python import cel

    T, t = _types()
    O, D = cel.Overload, cel.FunctionDecl
    decls = []
    for op, name in _COMPARISON_OPS.items():
        overloads = [O(f"{name}_{oid}", T.BOOL, [t[k], t[k]])
                     for k, oid in _COMPARISON_TYPES.items()]
        for a, aid in _NUMERIC_IDS.items():
            for b, bid in _NUMERIC_IDS.items():
                if a != b:
                    overloads.append(O(f"{name}_{aid}_{bid}", T.BOOL, [t[a], t[b]]))
        decls.append(D(op, overloads))
    decls += [
        D("isSorted", [O(f"list_{k}_is_sorted", T.BOOL, [T.List(t[k])], is_member=True)
                       for k in _ORDERED]),
        D("sum", [O(f"list_{k}_sum", t[k], [T.List(t[k])], is_member=True) for k in _SUMMABLE]),
        D("min", [O(f"list_{k}_min", t[k], [T.List(t[k])], is_member=True) for k in _ORDERED]),
        D("max", [O(f"list_{k}_max", t[k], [T.List(t[k])], is_member=True) for k in _ORDERED]),
        D("sets.contains", [O("list_sets_contains_list", T.BOOL,
                              [T.List(T.DYN), T.List(T.DYN)])]),
        D("sets.equivalent", [O("list_sets_equivalent_list", T.BOOL,
                                [T.List(T.DYN), T.List(T.DYN)])]),
        D("sets.intersects", [O("list_sets_intersects_list", T.BOOL,
                                [T.List(T.DYN), T.List(T.DYN)])]),
        D("find", [O("string_find_string", T.STRING, [T.STRING, T.STRING], is_member=True)]),
        D("findAll", [O("string_find_all_string", T.List(T.STRING), [T.STRING, T.STRING],
                        is_member=True),
                      O("string_find_all_string_int", T.List(T.STRING),
                        [T.STRING, T.STRING, T.INT], is_member=True)]),
        D("url", [O("string_to_url", t["URL"], [T.STRING])]),
        D("isURL", [O("is_url_string", T.BOOL, [T.STRING])]),
        D("getScheme", [O("url_get_scheme", T.STRING, [t["URL"]], is_member=True)]),
        D("getHost", [O("url_get_host", T.STRING, [t["URL"]], is_member=True)]),
        D("getHostname", [O("url_get_hostname", T.STRING, [t["URL"]], is_member=True)]),
        D("getPort", [O("url_get_port", T.STRING, [t["URL"]], is_member=True)]),
        D("getEscapedPath", [O("url_get_escaped_path", T.STRING, [t["URL"]], is_member=True)]),
        D("getQuery", [O("url_get_query", T.Map(T.STRING, T.List(T.STRING)), [t["URL"]],
                         is_member=True)]),
        D("quantity", [O("string_to_quantity", t["Quantity"], [T.STRING])]),
        D("isQuantity", [O("is_quantity_string", T.BOOL, [T.STRING])]),
        D("sign", [O("quantity_sign", T.INT, [t["Quantity"]], is_member=True)]),
        D("isInteger", [O("quantity_is_integer", T.BOOL, [t["Quantity"]], is_member=True)]),
        D("asInteger", [O("quantity_get_integer", T.INT, [t["Quantity"]], is_member=True)]),
        D("asApproximateFloat", [O("quantity_get_float", T.DOUBLE, [t["Quantity"]],
                                   is_member=True)]),
        D("add", [O("quantity_add", t["Quantity"], [t["Quantity"], t["Quantity"]],
                    is_member=True),
                  O("quantity_add_int", t["Quantity"], [t["Quantity"], T.INT], is_member=True)]),
        D("sub", [O("quantity_sub", t["Quantity"], [t["Quantity"], t["Quantity"]],
                    is_member=True),
                  O("quantity_sub_int", t["Quantity"], [t["Quantity"], T.INT], is_member=True)]),
        D("isGreaterThan", [O("quantity_is_greater_than", T.BOOL,
                              [t["Quantity"], t["Quantity"]], is_member=True)]),
        D("isLessThan", [O("quantity_is_less_than", T.BOOL, [t["Quantity"], t["Quantity"]],
                           is_member=True)]),
        D("compareTo", [O("quantity_compare_to", T.INT, [t["Quantity"], t["Quantity"]],
                          is_member=True)]),
        D("ip", [O("string_to_ip", t["IP"], [T.STRING]),
                 O("cidr_ip", t["IP"], [t["CIDR"]], is_member=True)]),
        D("isIP", [O("is_ip", T.BOOL, [T.STRING])]),
        D("ip.isCanonical", [O("ip_is_canonical", T.BOOL, [T.STRING])]),
        D("family", [O("ip_family", T.INT, [t["IP"]], is_member=True)]),
        D("isUnspecified", [O("ip_is_unspecified", T.BOOL, [t["IP"]], is_member=True)]),
        D("isLoopback", [O("ip_is_loopback", T.BOOL, [t["IP"]], is_member=True)]),
        D("isLinkLocalMulticast", [O("ip_is_link_local_multicast", T.BOOL, [t["IP"]],
                                     is_member=True)]),
        D("isLinkLocalUnicast", [O("ip_is_link_local_unicast", T.BOOL, [t["IP"]],
                                   is_member=True)]),
        D("isGlobalUnicast", [O("ip_is_global_unicast", T.BOOL, [t["IP"]], is_member=True)]),
        D("cidr", [O("string_to_cidr", t["CIDR"], [T.STRING])]),
        D("isCIDR", [O("is_cidr", T.BOOL, [T.STRING])]),
        D("containsIP", [O("cidr_contains_ip_ip", T.BOOL, [t["CIDR"], t["IP"]], is_member=True),
                         O("cidr_contains_ip_string", T.BOOL, [t["CIDR"], T.STRING],
                           is_member=True)]),
        D("containsCIDR", [O("cidr_contains_cidr", T.BOOL, [t["CIDR"], t["CIDR"]],
                             is_member=True),
                           O("cidr_contains_cidr_string", T.BOOL, [t["CIDR"], T.STRING],
                             is_member=True)]),
        D("masked", [O("cidr_masked", t["CIDR"], [t["CIDR"]], is_member=True)]),
        D("prefixLength", [O("cidr_prefix_length", T.INT, [t["CIDR"]], is_member=True)]),
        D("string", [*(O(oid, T.STRING, [t[k]]) for oid, k in _STRING_CONVERSIONS.items()),
                     O("ip_to_string", T.STRING, [t["IP"]]),
                     O("cidr_to_string", T.STRING, [t["CIDR"]])]),
    ]
    S, I = T.STRING, T.INT
    return decls + [
        D("indexOf", [O("string_index_of_string", I, [S, S], is_member=True),
                      O("string_index_of_string_int", I, [S, S, I], is_member=True),
                      O("list_index_of", I, [T.List(T.DYN), T.DYN], is_member=True)]),
        D("lastIndexOf", [O("string_last_index_of_string", I, [S, S], is_member=True),
                          O("string_last_index_of_string_int", I, [S, S, I], is_member=True),
                          O("list_last_index_of", I, [T.List(T.DYN), T.DYN], is_member=True)]),
        *_string_declarations(O, D, T, impls=None),
        *format_library.checker_declarations(cel, t["NamedFormat"]),
    ]


def _string_declarations(O, D, T, impls):
    """The strings extension's functions other than indexOf/lastIndexOf."""
    S, I = T.STRING, T.INT

    def o(oid, result, params, name=None):
        impl = None if impls is None else _wrap(getattr(impls, name))
        return O(oid, result, params, is_member=True, impl=impl)

    quote = O("strings_quote", S, [S], impl=None if impls is None else _wrap(impls.quote))
    return [
        D("charAt", [o("string_char_at_int", S, [S, I], "char_at")]),
        D("lowerAscii", [o("string_lower_ascii", S, [S], "lower_ascii")]),
        D("upperAscii", [o("string_upper_ascii", S, [S], "upper_ascii")]),
        D("replace", [o("string_replace_string_string", S, [S, S, S], "replace"),
                      o("string_replace_string_string_int", S, [S, S, S, I], "replace")]),
        D("split", [o("string_split_string", T.List(S), [S, S], "split"),
                    o("string_split_string_int", T.List(S), [S, S, I], "split")]),
        D("substring", [o("string_substring_int", S, [S, I], "substring"),
                        o("string_substring_int_int", S, [S, I, I], "substring")]),
        D("trim", [o("string_trim", S, [S], "trim")]),
        D("join", [o("list_join", S, [T.List(S)], "join"),
                   o("list_join_string", S, [T.List(S), S], "join")]),
        D("format", [o("string_format", S, [S, T.List(T.DYN)], "format")]),
        D("strings.quote", [quote]),
    ]


def runtime_declarations(rt: Runtime) -> list:
    """One overload per runtime signature, implemented by ``rt``."""
    from cel_expr_python import cel

    T, t = _types()
    O, D = cel.Overload, cel.FunctionDecl
    L = T.List(T.DYN)

    def member(name, oid, result, params, impl):
        return D(name, [O(oid, result, params, is_member=True, impl=_wrap(impl))])

    def glob(name, oid, result, params, impl):
        return D(name, [O(oid, result, params, impl=_wrap(impl))])

    q, u, ip, c = t["Quantity"], t["URL"], t["IP"], t["CIDR"]
    return [
        member("isSorted", "list_is_sorted", T.BOOL, [L], rt.is_sorted),
        member("sum", "list_sum", T.DYN, [L], rt.list_sum),
        member("min", "list_min", T.DYN, [L], rt.list_min),
        member("max", "list_max", T.DYN, [L], rt.list_max),
        D("indexOf", [O("string_index_of_string", T.INT, [T.STRING, T.STRING], is_member=True,
                        impl=_wrap(rt.str_index_of)),
                      O("string_index_of_string_int", T.INT, [T.STRING, T.STRING, T.INT],
                        is_member=True, impl=_wrap(rt.str_index_of)),
                      *_per_kind("list_index_of", L, rt.index_of)]),
        D("lastIndexOf", [O("string_last_index_of_string", T.INT, [T.STRING, T.STRING],
                            is_member=True, impl=_wrap(rt.str_last_index_of)),
                          O("string_last_index_of_string_int", T.INT,
                            [T.STRING, T.STRING, T.INT], is_member=True,
                            impl=_wrap(rt.str_last_index_of)),
                          *_per_kind("list_last_index_of", L, rt.last_index_of)]),
        *_string_declarations(O, D, T, impls=rt),
        glob("sets.contains", "list_sets_contains_list", T.BOOL, [L, L], rt.sets_contains),
        glob("sets.equivalent", "list_sets_equivalent_list", T.BOOL, [L, L],
             rt.sets_equivalent),
        glob("sets.intersects", "list_sets_intersects_list", T.BOOL, [L, L],
             rt.sets_intersects),
        member("find", "string_find_string", T.STRING, [T.STRING, T.STRING], rt.find),
        D("findAll", [O("string_find_all_string", T.List(T.STRING), [T.STRING, T.STRING],
                        is_member=True, impl=_wrap(rt.find_all)),
                      O("string_find_all_string_int", T.List(T.STRING),
                        [T.STRING, T.STRING, T.INT], is_member=True, impl=_wrap(rt.find_all))]),
        glob("url", "string_to_url", u, [T.STRING], rt.url),
        glob("isURL", "is_url_string", T.BOOL, [T.STRING], rt.is_url),
        member("getScheme", "url_get_scheme", T.STRING, [u], rt.get_scheme),
        member("getHost", "url_get_host", T.STRING, [u], rt.get_host),
        member("getHostname", "url_get_hostname", T.STRING, [u], rt.get_hostname),
        member("getPort", "url_get_port", T.STRING, [u], rt.get_port),
        member("getEscapedPath", "url_get_escaped_path", T.STRING, [u], rt.get_escaped_path),
        member("getQuery", "url_get_query", T.Map(T.STRING, T.List(T.STRING)), [u],
               rt.get_query),
        glob("quantity", "string_to_quantity", q, [T.STRING], rt.quantity),
        glob("isQuantity", "is_quantity_string", T.BOOL, [T.STRING], rt.is_quantity),
        member("sign", "quantity_sign", T.INT, [q], rt.q_sign),
        member("isInteger", "quantity_is_integer", T.BOOL, [q], rt.q_is_integer),
        member("asInteger", "quantity_get_integer", T.INT, [q], rt.q_as_integer),
        member("asApproximateFloat", "quantity_get_float", T.DOUBLE, [q], rt.q_as_float),
        D("add", [O("quantity_add", q, [q, q], is_member=True, impl=_wrap(rt.q_add)),
                  O("quantity_add_int", q, [q, T.INT], is_member=True, impl=_wrap(rt.q_add))]),
        D("sub", [O("quantity_sub", q, [q, q], is_member=True, impl=_wrap(rt.q_sub)),
                  O("quantity_sub_int", q, [q, T.INT], is_member=True, impl=_wrap(rt.q_sub))]),
        member("isGreaterThan", "quantity_is_greater_than", T.BOOL, [q, q], rt.q_greater),
        member("isLessThan", "quantity_is_less_than", T.BOOL, [q, q], rt.q_less),
        member("compareTo", "quantity_compare_to", T.INT, [q, q], rt.q_compare),
        D("ip", [O("string_to_ip", ip, [T.STRING], impl=_wrap(rt.ip)),
                 O("cidr_ip", ip, [c], is_member=True, impl=_wrap(rt.cidr_ip))]),
        glob("isIP", "is_ip", T.BOOL, [T.STRING], rt.is_ip),
        glob("ip.isCanonical", "ip_is_canonical", T.BOOL, [T.STRING], rt.ip_is_canonical),
        member("family", "ip_family", T.INT, [ip], rt.ip_family),
        member("isUnspecified", "ip_is_unspecified", T.BOOL, [ip], rt.ip_is_unspecified),
        member("isLoopback", "ip_is_loopback", T.BOOL, [ip], rt.ip_is_loopback),
        member("isLinkLocalMulticast", "ip_is_link_local_multicast", T.BOOL, [ip],
               rt.ip_is_link_local_multicast),
        member("isLinkLocalUnicast", "ip_is_link_local_unicast", T.BOOL, [ip],
               rt.ip_is_link_local_unicast),
        member("isGlobalUnicast", "ip_is_global_unicast", T.BOOL, [ip],
               rt.ip_is_global_unicast),
        glob("cidr", "string_to_cidr", c, [T.STRING], rt.cidr),
        glob("isCIDR", "is_cidr", T.BOOL, [T.STRING], rt.is_cidr),
        D("containsIP", [O("cidr_contains_ip_ip", T.BOOL, [c, ip], is_member=True,
                           impl=_wrap(rt.cidr_contains_ip)),
                         O("cidr_contains_ip_string", T.BOOL, [c, T.STRING], is_member=True,
                           impl=_wrap(rt.cidr_contains_ip))]),
        D("containsCIDR", [O("cidr_contains_cidr", T.BOOL, [c, c], is_member=True,
                             impl=_wrap(rt.cidr_contains_cidr)),
                           O("cidr_contains_cidr_string", T.BOOL, [c, T.STRING],
                             is_member=True, impl=_wrap(rt.cidr_contains_cidr))]),
        member("masked", "cidr_masked", c, [c], rt.cidr_masked),
        member("prefixLength", "cidr_prefix_length", T.INT, [c], rt.cidr_prefix_length),
        # The runtime dispatches on kinds: one overload serves every message (IP and CIDR).
        D("string", [O("ip_to_string", T.STRING, [ip], impl=_wrap(rt.opaque_to_string))]),
        *format_library.runtime_declarations(cel, rt, _wrap),
    ]


def _per_kind(oid: str, receiver, impl) -> list:
    """Runtime overloads of ``receiver.f(x)`` for every kind of ``x``: cel-cpp's runtime does not
    match a ``dyn`` parameter against concrete values."""
    from cel_expr_python import cel

    T = cel.Type
    kinds = {"int": T.INT, "uint": T.UINT, "double": T.DOUBLE, "bool": T.BOOL,
             "string": T.STRING, "bytes": T.BYTES, "list": T.List(T.DYN),
             "map": T.Map(T.DYN, T.DYN), "timestamp": T.TIMESTAMP, "duration": T.DURATION,
             "null": T.NULL}
    return [cel.Overload(f"{oid}_{k}", T.INT, [receiver, t], is_member=True, impl=_wrap(impl))
            for k, t in kinds.items()]


def _wrap(fn):
    """Library errors become CEL errors whose text is the message alone."""

    def call(*args):
        try:
            return fn(*args)
        except LibraryError:
            raise
        except (ValueError, TypeError, ZeroDivisionError) as err:
            raise LibraryError(str(err)) from None

    return call
