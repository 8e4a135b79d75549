"""python3 -m wrapir_inductor export|check SPEC --device cpu ...
python3 -m wrapir_inductor corpus DIR --device cpu --wrapir PATH --out DIR [--only NAME]...

Exit codes: 0 done; 2 unsupported constructs (each named on stderr);
1 any other error (one line)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parse_config(items: list[str]) -> dict:
    import ast

    config = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"wrapir_inductor: error: --config {item!r} is not KEY=VALUE")
        try:
            config[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            config[key] = value
    return config


def _report_findings(exported) -> int:
    findings = exported.translation.findings
    if not findings:
        return 0
    model = exported.spec.model_name
    for f in findings:
        where = f"line {f.line}" if f.line is not None else "graph"
        print(f"wrapir_inductor: unsupported: {model}: {where}: {f.cls}: {f.why}: {f.text}", file=sys.stderr)
    print(f"wrapir_inductor: {model}: {len(findings)} unsupported construct(s); partial output in {exported.out}",
          file=sys.stderr)
    return 2


def _summary(exported) -> str:
    program = exported.translation.program
    kinds: dict[str, int] = {}
    for line in program["body"]:
        kinds[line["kind"]] = kinds.get(line["kind"], 0) + 1
    kernel_calls = kinds.get("KernelCall", 0) + kinds.get("MultiKernelCall", 0)
    languages: dict[str, int] = {}
    for kernel in program["kernels"]:
        language = kernel.get("language", "triton")
        languages[language] = languages.get(language, 0) + 1
    kernels = ", ".join(f"{n} {'C++' if lang == 'cpp' else lang.capitalize()} kernels"
                        for lang, n in sorted(languages.items())) or "0 kernels"
    externs = sum(v for k, v in kinds.items() if k.startswith("ExternKernel"))
    return (f"wrapir_inductor: exported {exported.spec.model_name}: {len(program['body'])} lines, "
            f"{kernels}, {kernel_calls} kernel calls, {externs} extern calls, "
            f"{len(program['buffers'])} buffers -> {exported.out / 'program.json'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m wrapir_inductor")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("export", "check"):
        p = sub.add_parser(name)
        p.add_argument("spec", help="FILE.py:NAME; NAME() returns (fn, inputs) or (fn, inputs, options)")
        p.add_argument("--device", choices=["cpu", "cuda"], required=True)
        p.add_argument("--dynamic", action="store_true", default=None)
        p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
        p.add_argument("--out", type=Path, required=(name == "export"))
        if name == "check":
            p.add_argument("--wrapir", default="wrapir", help="the wrapir tool (default: wrapir on PATH)")
    p = sub.add_parser("corpus", help="check every DIR/*.py:model against its expectation")
    p.add_argument("directory", type=Path)
    p.add_argument("--device", choices=["cpu", "cuda"], required=True)
    p.add_argument("--wrapir", default="wrapir", help="the wrapir tool (default: wrapir on PATH)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--only", action="append", metavar="NAME", help="only this model (repeatable)")
    p.add_argument("--jobs", type=int, default=1, help="models checked at a time (default 1)")
    p = sub.add_parser("fidelity", help="sort the fidelity.diff of every model of a corpus --out DIR by kind")
    p.add_argument("directory", type=Path)
    args = parser.parse_args(argv)

    if args.command == "fidelity":
        from .fidelity import main as fidelity_main

        return fidelity_main(args.directory)
    if args.command == "corpus":
        from .corpus import corpus

        return corpus(args.directory, args.device, args.wrapir, args.out, args.only, args.jobs)

    from .export import ExportError, export, load_spec

    try:
        spec = load_spec(args.spec)
        config = _parse_config(args.config)
        if args.command == "export":
            exported = export(spec, args.device, args.out, args.dynamic, config)
            code = _report_findings(exported)
            if code == 0:
                print(_summary(exported))
            return code

        from .check import CheckError, check

        try:
            return check(spec, args.device, args.wrapir, args.out, args.dynamic, config)
        except CheckError as e:
            print(f"wrapir_inductor: error: {e}", file=sys.stderr)
            return 1
    except ExportError as e:
        print(f"wrapir_inductor: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
