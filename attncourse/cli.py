"""The ``attncourse`` command line: tools for learners, the static site and instructors."""

import argparse
import sys


def _doctor(args):
    from attncourse.envcheck import doctor

    report = doctor()
    print(report)
    return 0 if report.ok else 1


def _progress(args):
    from attncourse.progress_file import progress, progress_path

    print(progress())
    print(f"\n(kept in {progress_path()})")
    return 0


def _exercises(args):
    from attncourse.exercises import all_exercises
    from attncourse.quiz import all_questions

    for ex in all_exercises():
        print(f"{ex.notebook:<24} {ex.id:<22} {ex.signature}")
    print(f"\n{len(all_questions())} quiz questions.")
    return 0


def _site(args):
    from attncourse.site import build_site

    pages = build_site(args.out_dir)
    print(f"wrote {len(pages)} pages and index.html to {args.out_dir}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="attncourse",
                                     description="Tools for the attention course.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("doctor", help="check this machine: versions, CPU/GPU").set_defaults(func=_doctor)
    sub.add_parser("progress", help="show your exercises and quiz answers").set_defaults(
        func=_progress)
    sub.add_parser("exercises", help="list every exercise").set_defaults(func=_exercises)
    site = sub.add_parser("site", help="build a read-only HTML version of the course")
    site.add_argument("out_dir", help="folder to write index.html and the pages into")
    site.set_defaults(func=_site)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
