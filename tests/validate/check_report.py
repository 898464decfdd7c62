#!/usr/bin/env python3
"""Checks hoop-validate's outputs in DIR: report.json and every line of measurements.jsonl against
the schemas in docs/, each heatmap well-formed XML with one cell per measured (ordered) pair and
one slow mark per slow cell, and what the case asks of the verdict and the blame.

  check_report.py DIR [--verdict V] [--no-outliers] [--no-blame] [--only-blame KIND:WHAT]
                      [--failure] [--failure-hosts H1,H2] [--corrupt-rank R --offset O]
                      [--bisected HOST]
  check_report.py --selftest    the checks on made-up outputs that must fail them

Uses python3-jsonschema when it is installed, else a small validator of the schema subset the
files use (type, required, properties, items, enum, minimum, additionalProperties)."""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs")
METRICS = ("bandwidth", "bidirectional", "latency_p50", "latency_p99")


def load_schema(name):
    with open(os.path.join(DOCS, name), encoding="utf-8") as f:
        return json.load(f)


TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def is_type(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def small_validate(value, schema, path="$", root=None):
    """The subset of JSON Schema the files use; returns a list of problems."""
    root = schema if root is None else root
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return small_validate(value, target, path, root)
    problems = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(is_type(value, n) for n in names):
            return [f"{path}: {value!r} is not of type {types}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and is_type(value, "number") and value < schema["minimum"]:
        problems.append(f"{path}: {value} is below {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: '{key}' is missing")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                problems += small_validate(item, props[key], f"{path}.{key}", root)
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: unexpected '{key}'")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += small_validate(item, schema["items"], f"{path}[{i}]", root)
    return problems


def validate(value, schema, what):
    try:
        import jsonschema  # noqa: PLC0415 (optional)
    except ImportError:
        problems = small_validate(value, schema)
    else:
        validator = jsonschema.Draft7Validator(schema)
        problems = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(value)]
    return [f"{what}: {p}" for p in problems]


def check_outputs(directory):
    problems = []
    with open(os.path.join(directory, "report.json"), encoding="utf-8") as f:
        report = json.load(f)
    problems += validate(report, load_schema("validate-report.schema.json"), "report.json")
    lines = []
    with open(os.path.join(directory, "measurements.jsonl"), encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            line = json.loads(text)
            lines.append(line)
            problems += validate(line, load_schema("validate-line.schema.json"),
                                 f"measurements.jsonl:{number}")
    pairs = {(m["a"], m["b"]) for m in lines}
    for metric in METRICS:
        path = os.path.join(directory, f"heatmap-{metric}.svg")
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            problems.append(f"{path}: not well-formed XML: {e}")
            continue
        rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect")
                 if "cell" in r.get("class", "").split()]
        slow = [r for r in rects if "slow" in r.get("class", "").split()]
        if metric == "bandwidth" or report["matrices"][metric] is not None:
            cells = {(int(r.get("data-from")), int(r.get("data-to"))) for r in rects}
            measured = {p for a, b in pairs for p in ((a, b), (b, a))}
            if len(rects) != len(measured) or cells != measured:
                problems.append(f"{path}: {len(rects)} cells, want one per ordered pair measured "
                                f"({len(measured)})")
        slow_matrix = report["matrices"][metric]["slow"]
        want_slow = sum(1 for row in slow_matrix for v in row if v is True)
        if len(slow) != want_slow:
            problems.append(f"{path}: {len(slow)} cells marked slow, report.json has {want_slow}")
    return report, problems


def check_case(report, args):
    problems = []
    blames = report["blames"]
    described = [f"{b['kind']}:{b['what']}" for b in blames]
    if args.verdict and report["verdict"] != args.verdict:
        problems.append(f"verdict {report['verdict']}, want {args.verdict}")
    if args.no_outliers and report["outliers"]:
        problems.append(f"{len(report['outliers'])} outlier(s), want none: " +
                        "; ".join(f"{o['metric']} {o['from']}->{o['to']} {o['ratio']:.2f}"
                                  for o in report["outliers"][:5]))
    if args.no_blame and blames:
        problems.append(f"blamed {described}, want nothing")
    if args.only_blame and described != [args.only_blame]:
        problems.append(f"blamed {described}, want exactly ['{args.only_blame}']")
    if args.failure and report["failure"] is None:
        problems.append("no failure reported")
    if args.failure_hosts and report["failure"] is not None:
        # The ranks the failure names must all be on these hosts, and there must be some.
        allowed = set(args.failure_hosts.split(","))
        host_of = {rank: h["name"] for h in report["hosts"] for rank in h["ranks"]}
        named = {host_of.get(rank, "?") for rank in report["failure"]["ranks_named"]}
        if not named or not named <= allowed:
            problems.append(f"the failure names hosts {sorted(named)}, want some of {sorted(allowed)}")
    if args.corrupt_rank is not None:
        wanted = [b for b in blames if b["kind"] == "rank" and
                  b["what"].startswith(f"rank {args.corrupt_rank} ") and b["failed"]]
        if not wanted:
            problems.append(f"rank {args.corrupt_rank} not blamed for corrupt data: {described}")
        elif args.offset is not None and f"offset {args.offset}" not in wanted[0]["why"]:
            problems.append(f"the blame does not name offset {args.offset}: {wanted[0]['why']}")
    if args.bisected:
        names = {h["index"]: h["name"] for h in report["hosts"]}
        # A wrong collective's bisection, or the bisection of a failure that ended the run.
        runs = [(c["schedule"], c["blamed_host"], c["bisection"]) for c in report["collectives"]]
        if report["failure"] is not None:
            f = report["failure"]
            runs.append(("failure", f["blamed_host"], f["bisection"]))
        found = [r for r in runs if names.get(r[1]) == args.bisected]
        if not found:
            problems.append(f"no bisection isolated {args.bisected}: " +
                            str([(what, steps) for what, _, steps in runs]))
        elif not any(b["kind"] == "host" and b["what"] == args.bisected and b["failed"]
                     for b in blames):
            problems.append(f"the bisection isolated {args.bisected} but it is not blamed: "
                            f"{described}")
    return problems


def selftest():
    """A schema that rejects nothing would pass any report: made-up bad values must fail."""
    schema = load_schema("validate-report.schema.json")
    line_schema = load_schema("validate-line.schema.json")
    bad = [
        ({"tool": "hoop-validate"}, schema, "missing fields"),
        ({"pass": "0"}, line_schema, "a string for a number"),
    ]
    failures = 0
    for value, s, what in bad:
        if not validate(value, s, what) or not small_validate(value, s):
            print(f"selftest FAIL: {what} passed the schema")
            failures += 1
    ok = {"pass": 0, "confirmation": False, "phase": "cross-host", "round": 0, "a": 0, "b": 1, "host_a": "h0",
          "host_b": "h1", "transport": "tcp", "bandwidth_a_to_b_GBps": 1.0,
          "bandwidth_b_to_a_GBps": 1.0, "bidirectional_GBps": 2.0, "latency_p50_us": 10.0,
          "latency_p99_us": 20.0, "data_at_a": {"ok": True},
          "data_at_b": {"ok": False, "message": 0, "offset": 8, "expected": 1, "actual": 2}}
    broken = dict(ok, data_at_b={"ok": "no"})
    if not small_validate(broken, line_schema) or not validate(broken, line_schema, "bad check"):
        print("selftest FAIL: a data check that is not a boolean passed the schema")
        failures += 1
    if small_validate(ok, line_schema) or validate(ok, line_schema, "good line"):
        print("selftest FAIL: a good line failed the schema")
        failures += 1
    print("selftest:", "FAIL" if failures else "ok")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", nargs="?")
    parser.add_argument("--selftest", action="store_true")
    parser.add_argument("--verdict")
    parser.add_argument("--no-outliers", action="store_true")
    parser.add_argument("--no-blame", action="store_true")
    parser.add_argument("--only-blame")
    parser.add_argument("--failure", action="store_true")
    parser.add_argument("--corrupt-rank", type=int)
    parser.add_argument("--offset", type=int)
    parser.add_argument("--bisected")
    parser.add_argument("--failure-hosts")
    args = parser.parse_args()
    if args.selftest:
        return selftest()
    report, problems = check_outputs(args.directory)
    problems += check_case(report, args)
    for p in problems:
        print(p)
    if not problems:
        print(f"outputs valid; verdict {report['verdict']}, blamed: " +
              (", ".join(f"{b['kind']} {b['what']}" for b in report["blames"]) or "nothing"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
