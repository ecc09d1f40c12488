"""The ``attncourse`` command line: tools for learners, the static site and instructors."""

import argparse
import itertools
import os
import sys
from pathlib import Path

from attncourse.errors import CourseError


def _doctor(args):
    from attncourse.envcheck import doctor

    report = doctor(grading=True)
    print(report)
    return 0 if report.ok else 1


def _progress(args):
    from attncourse.progress_file import progress_path
    from attncourse.progress_report import progress

    print(progress())
    print(f"\n(kept in {progress_path()})")
    return 0


def _exercises(args):
    from attncourse.exercises import all_exercises
    from attncourse.quiz import all_questions

    for ex in all_exercises():
        print(f"{ex.notebook.stem:<24} {ex.id:<22} {ex.signature}")
    print(f"\n{len(all_questions())} quiz questions.")
    return 0


def _solve(args):
    from attncourse.instructor.solve import solve

    for path in solve(args.notebooks, args.output, run=args.execute, timeout=args.timeout):
        print(f"wrote {path}")
    return 0


def _grade(args):
    from attncourse.instructor.grade import Limits, grade
    from attncourse.instructor.report import printable, summary, write_csv
    from attncourse.instructor.sandbox import NO_SANDBOX

    out = Path(args.output)
    outputs = [(out, "the grades to a .csv")] + (
        [(Path(args.report), "the report to an .html")] if args.report else [])
    for path, what in outputs:
        if path.name.endswith(".ipynb") or any(path.exists() and Path(s).exists() and
                                          path.samefile(s) for s in args.submissions):
            raise CourseError(f"{path} looks like a submission; write {what} file. (A "
                              f"submission named like an option, '-o.ipynb' or "
                              f"'--report=x.ipynb', reads as one: put -- before the "
                              f"submissions.)")
    limits = Limits(cell_timeout=args.timeout, notebook_timeout=args.notebook_timeout,
                    memory_mb=args.memory_mb)
    if args.no_sandbox:
        print(f"warning: {NO_SANDBOX}", file=sys.stderr, flush=True)
    count, finished = len(args.submissions), itertools.count(1)

    def progress(path, report):
        points = sum(r.points for r in report.rows)
        print(f"[{next(finished)}/{count}] {printable(path)}: {points}/{len(report.rows)}",
              file=sys.stderr, flush=True)

    graded = grade(args.submissions, limits, notebook=args.notebook, jobs=args.jobs,
                   on_done=progress, sandbox=not args.no_sandbox)
    write_csv(graded.reports, out)
    print(summary(graded))
    print(f"\nwrote {out}")
    if args.report:
        from attncourse.instructor.class_report import from_graded, write_report

        print(f"wrote {write_report(from_graded(graded), args.report)}")
    return 0


def _reset(args):
    from attncourse.fresh_copies import reset

    backup = reset(args.notebook)
    print(f"{args.notebook} is the course's original again." +
          (f" Your version is kept as {backup}." if backup else " (Nothing to keep.)"))
    return 0


def _fetch(args):
    from attncourse.fresh_copies import fetch

    copied, kept = fetch(args.folder)
    print(f"copied {len(copied)} files into {args.folder}; open notebooks/00_welcome.ipynb.")
    for path in kept:
        if path.suffix == ".ipynb":
            print(f"kept your {path} (`attncourse reset {path}` replaces it)")
    return 0


def _export_nbgrader(args):
    from attncourse.instructor.nbgrader import export_nbgrader

    for path in export_nbgrader(args.folder, args.notebooks):
        print(f"wrote {path}")
    return 0


def _instructor_commands(sub):
    solve = sub.add_parser("solve", help="write solved copies of notebooks (for presenting)")
    solve.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    solve.add_argument("-o", "--output", required=True, metavar="DIR",
                       help="folder for the solved copies (never the notebooks' own folder)")
    solve.add_argument("--execute", action="store_true",
                       help="run each solved notebook and store its outputs")
    solve.add_argument("--timeout", type=float, default=300, metavar="SECONDS",
                       help="per cell, with --execute (default 300)")
    solve.set_defaults(func=_solve)

    grade = sub.add_parser("grade", help="grade learners' notebooks into a CSV file")
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    grade.add_argument("-o", "--output", required=True, metavar="CSV")
    grade.add_argument("--report", metavar="HTML",
                       help="also write a class report: pass rates, the commonest mistakes "
                            "per exercise, each learner's marks (one self-contained page)")
    grade.add_argument("--timeout", type=float, default=60, metavar="SECONDS",
                       help="per cell (default 60)")
    grade.add_argument("--notebook-timeout", type=float, default=600, metavar="SECONDS",
                       help="per notebook, restarts included (default 600)")
    grade.add_argument("--memory-mb", type=int, default=4096, metavar="MB",
                       help="memory a kernel may map beyond its start, shared memory "
                            "included; enforced on Linux (default 4096)")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="run kernels without the sandbox (where bubblewrap is missing); "
                            "only for notebooks you trust")
    grade.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), metavar="N",
                       help="submissions graded at once (default 2)")
    grade.add_argument("--notebook", metavar="NN",
                       help="the course notebook the class worked on, e.g. 02 (default: "
                            "read from the submissions' exercise cells)")
    grade.set_defaults(func=_grade)

    reset = sub.add_parser("reset", help="restore a course notebook (your file is backed up)")
    reset.add_argument("notebook", metavar="NOTEBOOK")
    reset.set_defaults(func=_reset)

    fetch = sub.add_parser("fetch", help="copy the course's notebooks into a folder")
    fetch.add_argument("folder", metavar="DIR")
    fetch.set_defaults(func=_fetch)

    export = sub.add_parser("export-nbgrader", help="write nbgrader source notebooks")
    export.add_argument("folder", metavar="DIR", help="the nbgrader course folder")
    export.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                        help="default: every course notebook")
    export.set_defaults(func=_export_nbgrader)


def _site(args):
    from attncourse.site import build_site

    pages = build_site(args.out_dir)
    print(f"wrote {len(pages)} pages and index.html to {args.out_dir}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="attncourse",
                                     description="Tools for the attention course.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("doctor", help="check this machine: versions, CPU/GPU, grading sandbox"
                   ).set_defaults(func=_doctor)
    sub.add_parser("progress", help="show your exercises and quiz answers").set_defaults(
        func=_progress)
    sub.add_parser("exercises", help="list every exercise").set_defaults(func=_exercises)
    site = sub.add_parser("site", help="build a read-only HTML version of the course")
    site.add_argument("out_dir", help="folder to write index.html and the pages into")
    site.set_defaults(func=_site)
    _instructor_commands(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except CourseError as exc:
        print(f"attncourse {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
