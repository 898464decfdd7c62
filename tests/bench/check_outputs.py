#!/usr/bin/python3
"""Checks the result files of one hoop-perf run against bench/perf/README.md.

    check_outputs.py --readme README.md --json J --csv C --plot P.svg --collective allreduce
                     --nranks 2 --sizes 8 --algorithms ring,direct,oneshot,hierarchical [--types float] [--ops sum]
                     [--expect-wrong] [--self-test]

The JSON must have exactly the fields the README documents (run, ranks, tables, rows,
placements), the CSV header exactly the documented columns, and the SVG must be well-formed with
one series per collective/algorithm/transport/type/op in the rows. Row counts are sizes x types x
ops x tables; every wrong count must be 0 (or, with --expect-wrong, some must not be).
--algorithms auto: no --algo; each row must name one of hoop's schedules (its cost model picks).

--self-test checks the checker: it damages copies of the files in many ways and fails unless
every damaged copy is rejected. Standard library only: runs on Debian's /usr/bin/python3.
"""

import argparse
import copy
import csv
import io
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET

# What hoop-perf records as the transport: HOOP_TRANSPORT when the test sets it, else "auto".
EXPECTED_TRANSPORT = os.environ.get("HOOP_TRANSPORT") or "auto"

SVG_NS = "{http://www.w3.org/2000/svg}"


class Failure(Exception):
    pass


# hoop's schedule names (HOOP_ALGO's), and those that serve only some calls.
KNOWN_SCHEDULES = {"ring", "direct", "oneshot", "recdoubling", "rabenseifner", "twoshot",
                   "bruck", "tree", "hierarchical", "pairwise", "grouped"}
SCHEDULES_WITH_CONDITIONS = {"oneshot", "hierarchical"}

def check(condition, message):
    # Not `assert`: python -O would remove the checks.
    if not condition:
        raise Failure(message)


def documented_fields(readme_text):
    """{section: [field, ...]} from the README's '<!-- fields: NAME -->' tables."""
    sections = {}
    pattern = re.compile(r"<!-- fields: ([\w-]+) -->\n(.*?)<!-- end fields -->", re.S)
    for name, body in pattern.findall(readme_text):
        fields = re.findall(r"^\| `([^`]+)` \|", body, re.M)
        check(fields, f"README section {name} documents no fields")
        sections[name] = fields
    for name in ("json-run", "json-rank", "json-table", "json-row", "json-placement", "csv"):
        check(name in sections, f"README has no '<!-- fields: {name} -->' table")
    return sections


def check_keys(obj, documented, what):
    check(isinstance(obj, dict), f"{what} is not an object")
    missing = [k for k in documented if k not in obj]
    extra = [k for k in obj if k not in documented]
    check(not missing, f"{what} lacks documented fields {missing}")
    check(not extra, f"{what} has undocumented fields {extra}")
    check(list(obj) == list(documented), f"{what} fields are not in the documented order")


def series_label(row):
    label = f"{row['collective']} {row['algorithm']} {row['transport']} {row['type']}"
    if row["redop"] != "none":
        label += f" {row['redop']}"
    return label


def value_label(value):
    """svg_chart.cc's valueLabel."""
    if abs(value) >= 100:
        return "%.0f" % value
    if abs(value) >= 10:
        return "%.1f" % value
    if abs(value) >= 1 or value == 0:
        return "%.2f" % value
    return "%.3g" % value


def size_label(size):
    units = ["B", "K", "M", "G", "T"]
    unit = 0
    while unit + 1 < len(units) and size % 1024 == 0:
        size //= 1024
        unit += 1
    return f"{size}{units[unit]}"


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_placement(p, fields, what, check_enabled, expect_wrong):
    check_keys(p, fields["json-placement"], what)
    for key in ("time_us", "median_us", "p99_us", "min_us", "max_us"):
        check(isinstance(p[key], (int, float)) and p[key] > 0, f"{what}.{key} is not positive")
    for key in ("algbw_gbs", "busbw_gbs"):
        check(isinstance(p[key], (int, float)) and p[key] >= 0, f"{what}.{key} is negative")
    check(p["min_us"] <= p["median_us"] <= p["p99_us"] <= p["max_us"],
          f"{what}: not min <= median <= p99 <= max: {p}")
    # The batch's mean per iteration lies within the per-iteration extremes (loosely: the
    # per-iteration times are combined across ranks per iteration, the batch time once).
    check(p["min_us"] * 0.5 <= p["time_us"] <= p["max_us"] * 2,
          f"{what}: time_us {p['time_us']} far outside [{p['min_us']}, {p['max_us']}]")
    if not check_enabled:
        check(p["wrong"] is None, f"{what}.wrong should be null with -c 0")
    else:
        check(isinstance(p["wrong"], int) and p["wrong"] >= 0, f"{what}.wrong is not a count")
        if not expect_wrong:
            check(p["wrong"] == 0, f"{what}.wrong is {p['wrong']}")


def check_json(doc, args, fields):
    check_keys(doc, fields["json-run"], "the run")
    check(doc["format"] == "hoop-perf", "format is not hoop-perf")
    check(doc["format_version"] == 1, "format_version is not 1")
    check(re.fullmatch(r"\d+\.\d+\.\d+", doc["hoop_version"]), "hoop_version is not x.y.z")
    check(doc["collective"] == args.collective, f"collective is {doc['collective']}")
    check(doc["nranks"] == args.nranks, f"nranks is {doc['nranks']}")
    check(len(doc["ranks"]) == args.nranks, "ranks does not list every rank")
    for i, rank in enumerate(doc["ranks"]):
        check_keys(rank, fields["json-rank"], f"ranks[{i}]")
        check(rank["rank"] == i and rank["pid"] > 0 and rank["host"], f"ranks[{i}] is wrong")
    check(len({r["pid"] for r in doc["ranks"]}) == args.nranks, "pids are not distinct")
    check(doc["hosts"] == list(dict.fromkeys(r["host"] for r in doc["ranks"])),
          "hosts is not the ranks' distinct hosts")
    check(doc["nhosts"] == len(doc["hosts"]), "nhosts does not count hosts")
    check(doc["memory"] == "host" and doc["transport"] == EXPECTED_TRANSPORT, "memory or transport")
    check(doc["device"] is None and doc["device_emulated"] is False, "device on host memory")
    check(doc["datatypes"] == args.types, f"datatypes is {doc['datatypes']}")
    check(doc["ops"] == args.ops, f"ops is {doc['ops']}")
    check(isinstance(doc["iters"], int) and doc["iters"] >= 1, "iters")
    check(isinstance(doc["warmup_iters"], int) and doc["warmup_iters"] >= 0, "warmup_iters")

    tables = [t["algorithm"] for t in doc["tables"]]
    check(tables == args.algorithms, f"tables are {tables}, expected {args.algorithms}")
    expect_option = None if args.algorithms == ["auto"] else args.algo_option
    check(doc["algo_option"] == expect_option, f"algo_option is {doc['algo_option']}")

    per_table = args.sizes * len(args.types) * len(args.ops)
    rows = doc["rows"]
    check(len(rows) == per_table * len(tables),
          f"{len(rows)} rows, expected {args.sizes} sizes x {len(args.types)} types x "
          f"{len(args.ops)} ops x {len(tables)} tables")
    wrong_seen = 0
    for t, table in enumerate(doc["tables"]):
        check_keys(table, fields["json-table"], f"tables[{t}]")
        check(table["rows"] == per_table, f"tables[{t}].rows is {table['rows']}")
        table_rows = rows[t * per_table:(t + 1) * per_table]
        table_wrong = sum(r[p]["wrong"] or 0 for r in table_rows
                          for p in ("out_of_place", "in_place"))
        if doc["check"]:
            check(table["wrong_total"] == table_wrong, f"tables[{t}].wrong_total is not the sum")
        busbws = [r[p]["busbw_gbs"] for r in table_rows for p in ("out_of_place", "in_place")]
        check(close(table["avg_busbw_gbs"], sum(busbws) / len(busbws)),
              f"tables[{t}].avg_busbw_gbs is not the mean busbw")
        for i, row in enumerate(table_rows):
            what = f"rows[{t * per_table + i}]"
            check_keys(row, fields["json-row"], what)
            check(row["collective"] == args.collective, f"{what}.collective")
            check(row["transport"] == EXPECTED_TRANSPORT, f"{what}.transport")
            check(row["type"] in args.types, f"{what}.type")
            check(row["redop"] in args.ops, f"{what}.redop")
            if table["algorithm"] == "auto":
                # hoop's cost model picks; the row must name one of its schedules, and the
                # smallest allreduce on one host goes one-shot through shared memory.
                check(row["algorithm"] in KNOWN_SCHEDULES,
                      f"{what}.algorithm {row['algorithm']} is no hoop schedule")
                if args.collective == "allreduce" and row["size_bytes"] <= 64:
                    check(row["algorithm"] == "oneshot",
                          f"{what}: {row['algorithm']} at {row['size_bytes']} B, not oneshot")
            elif table["algorithm"] in SCHEDULES_WITH_CONDITIONS:
                # Forced but unable to serve the row (too large for one-shot, one host for the
                # hierarchy): hoop's own choice runs, and the row says which.
                check(row["algorithm"] in KNOWN_SCHEDULES,
                      f"{what}.algorithm {row['algorithm']} is no hoop schedule")
            else:
                check(row["algorithm"] == table["algorithm"],
                      f"{what}.algorithm is {row['algorithm']} in the {table['algorithm']} table")
            for p in ("out_of_place", "in_place"):
                check_placement(row[p], fields, f"{what}.{p}", doc["check"], args.expect_wrong)
                wrong_seen += row[p]["wrong"] or 0
                place = row[p]
                check(close(place["busbw_gbs"], place["algbw_gbs"] * doc["busbw_factor"]),
                      f"{what}.{p}: busbw is not algbw * busbw_factor")
                check(close(place["algbw_gbs"], row["size_bytes"] / place["time_us"] / 1e3),
                      f"{what}.{p}: algbw is not size / time")
        # Sizes grow within each type and op.
        for k in range(0, per_table, args.sizes):
            sizes = [r["size_bytes"] for r in table_rows[k:k + args.sizes]]
            check(sizes == sorted(sizes) and len(set(sizes)) == len(sizes),
                  f"tables[{t}]: sizes do not grow: {sizes}")
    if args.expect_wrong:
        check(wrong_seen > 0, "expected some wrong results (HOOP_PERF_CORRUPT), saw none")
    return rows


def check_csv(text, rows, fields):
    reader = csv.reader(io.StringIO(text, newline=""))
    lines = list(reader)
    check(lines, "the CSV is empty")
    check(lines[0] == fields["csv"], f"CSV header {lines[0]} is not the documented columns")
    data = lines[1:]
    check(len(data) == len(rows), f"{len(data)} CSV rows, {len(rows)} JSON rows")
    columns = fields["csv"]
    for i, (line, row) in enumerate(zip(data, rows)):
        check(len(line) == len(columns), f"CSV row {i} has {len(line)} fields")
        record = dict(zip(columns, line))
        for key in ("collective", "algorithm", "transport", "memory", "type", "redop"):
            check(record[key] == row[key], f"CSV row {i}: {key} {record[key]} != {row[key]}")
        for key in ("size_bytes", "count", "root"):
            check(int(record[key]) == row[key], f"CSV row {i}: {key} differs from the JSON")
        for prefix, placement in (("oop_", "out_of_place"), ("ip_", "in_place")):
            p = row[placement]
            for key in ("time_us", "algbw_gbs", "busbw_gbs", "median_us", "p99_us", "min_us",
                        "max_us"):
                check(float(record[prefix + key]) == p[key],
                      f"CSV row {i}: {prefix}{key} differs from the JSON")
            wrong = record[prefix + "wrong"]
            check((wrong == "" and p["wrong"] is None) or
                  (wrong != "" and int(wrong) == p["wrong"]),
                  f"CSV row {i}: {prefix}wrong differs from the JSON")


def check_svg(text, rows, args):
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as error:
        raise Failure(f"the SVG is not well-formed XML: {error}")
    check(root.tag == SVG_NS + "svg", f"root element is {root.tag}")
    check(root.get("version") == "1.1", "not SVG 1.1")
    check(root.get("viewBox"), "no viewBox")
    texts = ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]
    check("Message size (bytes, log2 scale)" in texts, "no x axis label")
    check(any("GB/s" in t and "andwidth" in t for t in texts), "no y axis label with GB/s")
    sizes = sorted({r["size_bytes"] for r in rows if r["size_bytes"] > 0})
    # With at most 16 powers of two in range every one is labelled.
    lo, hi = math.floor(math.log2(sizes[0])), math.ceil(math.log2(sizes[-1]))
    if hi - lo + 1 <= 16:
        for e in range(max(lo, 0), hi + 1):
            check(size_label(2 ** e) in texts, f"no x tick label {size_label(2 ** e)}")

    groups = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "series"]
    labels = [g.findtext(SVG_NS + "title") for g in groups]
    expected = list(dict.fromkeys(series_label(r) for r in rows))
    check(labels == expected, f"series {labels}, expected {expected}")
    for algorithm in args.algorithms:
        # A conditional schedule's table may hold only rows another schedule ran.
        if algorithm != "auto" and algorithm not in SCHEDULES_WITH_CONDITIONS:
            check(any(f"{args.collective} {algorithm} " in label for label in labels),
                  f"no series for {algorithm}")
    for group, label in zip(groups, labels):
        series_rows = [r for r in rows if series_label(r) == label and r["size_bytes"] > 0]
        lines = group.findall(SVG_NS + "polyline")
        check(len(lines) == 1, f"series {label}: {len(lines)} polylines")
        points = lines[0].get("points").split()
        check(len(points) == len(series_rows), f"series {label}: {len(points)} points")
        peaks = [c for c in group.iter(SVG_NS + "circle") if c.get("class") == "peak"]
        check(len(peaks) == 1, f"series {label}: {len(peaks)} peak markers")
        peak = max(r["out_of_place"]["busbw_gbs"] for r in series_rows)
        peak_labels = [t.text for t in group.iter(SVG_NS + "text")
                       if t.get("class") == "peak-label"]
        check(peak_labels == [f"{value_label(peak)} GB/s"],
              f"series {label}: peak label {peak_labels}, expected {value_label(peak)} GB/s")
        check(label in texts, f"series {label} is not in the legend")


def run_checks(json_text, csv_text, svg_text, args, fields):
    try:
        doc = json.loads(json_text)
    except json.JSONDecodeError as error:
        raise Failure(f"the JSON does not parse: {error}")
    rows = check_json(doc, args, fields)
    check_csv(csv_text, rows, fields)
    check_svg(svg_text, rows, args)


def damaged_copies(json_text, csv_text, svg_text):
    """(what, json, csv, svg) with one thing wrong each."""
    doc = json.loads(json_text)

    def with_doc(change):
        d = copy.deepcopy(doc)
        change(d)
        return json.dumps(d)

    def set_key(obj, key, value):
        obj[key] = value

    csv_lines = csv_text.splitlines(keepends=True)
    series_start = svg_text.rfind('<g class="series"')
    series_end = svg_text.find("</g>", series_start) + len("</g>\n")
    peak_at = svg_text.find('class="peak-label"')
    peak_text_at = svg_text.find(">", peak_at) + 1
    yield "JSON row dropped", with_doc(lambda d: d["rows"].pop()), csv_text, svg_text
    def one_wrong(d):  # consistent with its table's total, so only the count itself is wrong
        d["rows"][0]["out_of_place"]["wrong"] = 1
        d["tables"][0]["wrong_total"] = (d["tables"][0]["wrong_total"] or 0) + 1

    yield "JSON wrong result", with_doc(one_wrong), csv_text, svg_text
    yield "JSON wrong total", with_doc(
        lambda d: set_key(d["tables"][-1], "wrong_total", 5)), csv_text, svg_text
    yield "JSON field missing", with_doc(
        lambda d: d["rows"][-1]["in_place"].pop("p99_us")), csv_text, svg_text
    yield "JSON run field missing", with_doc(lambda d: d.pop("iters")), csv_text, svg_text
    yield "JSON undocumented field", with_doc(
        lambda d: set_key(d, "surprise", 1)), csv_text, svg_text
    yield "JSON min above median", with_doc(
        lambda d: set_key(d["rows"][0]["in_place"], "min_us",
                          d["rows"][0]["in_place"]["median_us"] * 2)), csv_text, svg_text
    # To a schedule the row did not run (hoop's own choice may have been the tree).
    yield "JSON algorithm swapped", with_doc(
        lambda d: set_key(d["rows"][-1], "algorithm",
                          "ring" if d["rows"][-1]["algorithm"] == "tree" else "tree")), \
        csv_text, svg_text
    yield "JSON not JSON", json_text[:-3], csv_text, svg_text
    yield "CSV row dropped", json_text, "".join(csv_lines[:-1]), svg_text
    yield "CSV column renamed", json_text, csv_text.replace("oop_p99_us", "oop_p95_us", 1), svg_text
    changed_row = csv_lines[1].replace(f",{EXPECTED_TRANSPORT},", ",bogus,")
    yield "CSV value changed", json_text, "".join(csv_lines[:1] + [changed_row] + csv_lines[2:]), \
        svg_text
    yield "SVG series removed", json_text, csv_text, svg_text[:series_start] + svg_text[series_end:]
    yield "SVG truncated", json_text, csv_text, svg_text[:len(svg_text) // 2]
    yield "SVG peak label changed", json_text, csv_text, (
        svg_text[:peak_text_at] + "9" + svg_text[peak_text_at:])


def self_test(json_text, csv_text, svg_text, args, fields):
    run_checks(json_text, csv_text, svg_text, args, fields)  # the originals pass
    missed = []
    for what, j, c, s in damaged_copies(json_text, csv_text, svg_text):
        try:
            run_checks(j, c, s, args, fields)
            missed.append(what)
        except (Failure, KeyError, ValueError, TypeError) as error:
            print(f"rejected as it should: {what}: {str(error)[:100]}")
    check(not missed, f"the checker accepted damaged files: {missed}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--plot", required=True)
    parser.add_argument("--collective", required=True)
    parser.add_argument("--nranks", type=int, required=True)
    parser.add_argument("--sizes", type=int, required=True, help="sizes per type and op")
    parser.add_argument("--algorithms", required=True,
                        help="the tables' schedules, comma separated, or auto (no --algo)")
    parser.add_argument("--algo-option",
                        help="--algo as given (default: the one schedule, or all for several)")
    parser.add_argument("--types", default="float")
    parser.add_argument("--ops", default="sum")
    parser.add_argument("--expect-wrong", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    args.algorithms = args.algorithms.split(",")
    args.types = args.types.split(",")
    args.ops = args.ops.split(",")
    if args.algo_option is None:
        args.algo_option = args.algorithms[0] if len(args.algorithms) == 1 else "all"

    try:
        for path in (args.json, args.csv, args.plot):
            check(os.path.isfile(path), f"{path} was not written")
            check(not os.path.exists(path + ".tmp"), f"{path}.tmp was left behind")
        with open(args.readme, encoding="utf-8") as f:
            fields = documented_fields(f.read())
        texts = []
        for path in (args.json, args.csv, args.plot):
            with open(path, encoding="utf-8", newline="") as f:
                texts.append(f.read())
        if args.self_test:
            self_test(*texts, args, fields)
        else:
            run_checks(*texts, args, fields)
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        return 1
    print("outputs OK" if not args.self_test else "self-test OK: every damaged copy rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
