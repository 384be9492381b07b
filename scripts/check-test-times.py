#!/usr/bin/env python3
"""Prints each test's time against its timeout and fails if one used more than a share of it.

    check-test-times.py BUILD_DIR JUNIT_XML [--max-share 0.333]

A test that passes at half its timeout here fails on the next machine a little slower, as
example_mesh_refinement_adapt did under ASan (4.4 s normally, past 120 s there). So every test
must pass within a third of its timeout in every build on the reference 2-core machine. The
times come from the JUnit file `ctest --output-junit` wrote; the timeouts from ctest's own
view of the tests (`ctest --show-only=json-v1`), so a timeout scaled by the build is what counts.
"""
import argparse
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def timeouts(build_dir):
    out = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    result = {}
    for test in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        # ctest's default when a test sets none (DART_TESTING_TIMEOUT): 1500 s.
        result[test["name"]] = float(props.get("TIMEOUT", 1500))
    return result


def times(junit_file):
    root = ET.parse(junit_file).getroot()
    return {case.get("name"): float(case.get("time", 0)) for case in root.iter("testcase")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir")
    parser.add_argument("junit")
    parser.add_argument("--max-share", type=float, default=1 / 3,
                        help="largest share of its timeout a test may use (default: a third)")
    args = parser.parse_args()

    limits = timeouts(args.build_dir)
    ran = times(args.junit)
    if not ran:
        sys.exit(f"{args.junit}: no test ran")
    width = max(len(name) for name in ran)
    over = []
    print(f"{'test':<{width}}  {'seconds':>8}  {'timeout':>7}  share")
    for name, seconds in sorted(ran.items(), key=lambda kv: -kv[1] / limits.get(kv[0], 1500)):
        if name not in limits:
            sys.exit(f"{args.junit}: test '{name}' is not a test of {args.build_dir}")
        share = seconds / limits[name]
        flag = "  OVER" if share > args.max_share else ""
        print(f"{name:<{width}}  {seconds:8.1f}  {limits[name]:7.0f}  {share:5.0%}{flag}")
        if flag:
            over.append(name)
    print(f"{len(ran)} tests, {sum(ran.values()):.0f} s in all")
    if over:
        print(f"check-test-times: {len(over)} test(s) used more than {args.max_share:.0%} of "
              f"their timeout: {', '.join(over)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
