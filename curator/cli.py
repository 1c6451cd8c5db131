"""The `memcurate` command line (docs/design.md §3).

This is the composition root: the one engine module that reaches into
`hooks/` and `widgets/`, always lazily, so `memcurate hook` loads
only what the hook needs.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # `types` is an import the hook does not need
    from types import SimpleNamespace


def main(argv: list[str] | None = None) -> int:
    as_command = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["hook"]:
        if as_command:
            # A process that lives milliseconds: the cycle collector's passes over what the imports and the
            # config made (~2 ms, more than the pass) would free nothing (a pass leaves no cycles).
            import gc

            gc.disable()
        # The hot path: every Claude Code turn. No argparse, no yaml, nothing else.
        from memcurate.hooks.dispatch import main as hook_main

        # --review-auto-memory: the write guard stages Claude's memory writes
        code = hook_main(argv[1:])
        if as_command:
            # Every file is closed and every write done: skip the interpreter's
            # teardown, ~5 ms of the hook's budget here.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, not at exit, so a reader that left is seen below
    except BrokenPipeError:
        code = _reader_left()
    return code


def _reader_left() -> int:
    """`memcurate status | head -1`: the reader closed the pipe. Leave quietly, as Unix tools do (killed by
    SIGPIPE: 128 + 13), with stdout pointed at /dev/null so the interpreter's own flush at exit cannot
    fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 141


def _tui_args(argv: list[str]) -> SimpleNamespace | None:
    """`memcurate` and `memcurate --project DIR`, the TUI, as the parser would read them; None for any
    other command line. The parser (13 subparsers) is about a tenth of the CPU before the TUI's first
    frame: these two never build it."""
    if argv == []:
        project = None
    elif len(argv) == 2 and argv[0] == "--project" and not argv[1].startswith("-"):
        project = argv[1]
    elif len(argv) == 1 and argv[0].startswith("--project=") and len(argv[0]) > 10:
        project = argv[0][len("--project=") :]
    else:
        return None
    from types import SimpleNamespace

    return SimpleNamespace(
        command=None,
        project=project,
        auto_approve=False,
        min_confidence=None,
        json=False,
        debug=False,
    )


def _main(argv: list[str]) -> int:
    return _run(_tui_args(argv) or _parse(argv))


def _parse(argv: list[str]):
    import argparse

    from memcurate.curator import __version__

    parser = argparse.ArgumentParser(
        prog="memcurate",
        description="Human-in-the-loop memory curator for Claude Code. Without a command, `memcurate` opens "
        "the live review TUI for the project (run it in a terminal beside Claude Code).",
        epilog="Try it offline on a bundled session: memcurate demo. Each command has its own --help.",
    )
    parser.add_argument("--version", action="version", version=f"memcurate {__version__}")
    parser.add_argument(
        "--project", metavar="DIR", help="project folder (default: git root of the cwd)"
    )
    parser.add_argument(
        "--auto-approve",
        action="store_true",
        help="headless: draft what is pending, save the drafts at or above the confidence "
        "gate, hold the rest for review",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument(
        "--min-confidence",
        type=_confidence,
        metavar="X",
        help="with --auto-approve: save only drafts whose confidence is at least X (0..1; "
        "default: auto_approve.min_confidence in the config)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = _Commands(parser.add_subparsers(dest="command", metavar="COMMAND"))
    p_hook = sub.add_parser("hook", help="Claude Code hook entry: reads the hook JSON on stdin")
    p_hook.add_argument(
        "--review-auto-memory",
        action="store_true",
        help="stage Claude's own memory writes for review instead of letting them through",
    )
    p_triage = sub.add_parser(
        "triage", help="stage triages of existing transcript files (backfill)"
    )
    p_triage.add_argument("paths", nargs="+", metavar="PATH")
    p_status = sub.add_parser("status", help="staged work by state")
    p_install = sub.add_parser("install", help="add memcurate's hooks to Claude Code's settings")
    p_install.add_argument(
        "--review-auto-memory",
        action="store_true",
        help="the hook asks you before Claude saves a memory of its own",
    )
    p_uninstall = sub.add_parser(
        "uninstall", help="remove memcurate's hooks from Claude Code's settings"
    )
    for p in (p_install, p_uninstall):
        p.add_argument(
            "--scope",
            choices=("local", "project", "user"),
            default="local",
            help="local: .claude/settings.local.json (personal, the default); project: "
            ".claude/settings.json (shared); user: ~/.claude/settings.json (every project)",
        )
    p_demo = sub.add_parser("demo", help="a throwaway project seeded from the bundled demo session")
    p_demo.add_argument(
        "--auto-approve",
        action="store_true",
        default=argparse.SUPPRESS,
        help="run headless instead of opening the TUI",
    )
    p_check = sub.add_parser(
        "check", help="hygiene: stale, duplicate, secret, past the load limit; stages proposals"
    )
    p_check.add_argument(
        "--quiet", action="store_true", help="print nothing (stage the proposals only)"
    )
    p_tidy = sub.add_parser(
        "tidy", help="stage merge proposals for near-duplicate and contradicting memories"
    )
    review = _review_parsers(sub)
    # The common options are accepted after the subcommand too: `memcurate triage --project DIR --json`.
    for p in (p_triage, p_status, p_install, p_uninstall, p_check, p_tidy, *review):
        p.add_argument("--project", metavar="DIR", default=argparse.SUPPRESS, help="project folder")
        p.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
        )
    for p in (p_triage, p_status, p_demo, p_install, p_uninstall, p_check, p_tidy, *review):
        p.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON document"
        )

    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command's own parser: its usage, not the top level's
        sub.parsers.get(args.command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.min_confidence is not None and not (args.auto_approve and args.command is None):
        parser.error("--min-confidence goes with --auto-approve")
    return args


def _run(args) -> int:
    from memcurate.curator.project_arg import UserError

    try:
        if args.command is None and not args.auto_approve:
            # The TUI: the commands and the config they load wait for the engine, after the first frame.
            from memcurate.curator.project_arg import project_dir

            return _review(project_dir(args))
        if (
            args.command == "hook"
        ):  # after a global option (`memcurate --debug hook`): the same hook
            from memcurate.hooks.dispatch import REVIEW_FLAG
            from memcurate.hooks.dispatch import main as hook_main

            return hook_main([REVIEW_FLAG] if args.review_auto_memory else [])
        from memcurate.curator import commands

        if args.command == "triage":
            return commands.triage(args)
        if args.command == "status":
            return commands.status(args)
        if args.command in ("list", "show", "approve", "reject"):
            from memcurate.curator import review_commands

            return getattr(review_commands, {"list": "list_items"}.get(args.command, args.command))(
                args
            )
        if args.command == "check":
            from memcurate.curator.check_command import check

            return check(args)
        if args.command == "tidy":
            from memcurate.curator.tidy_command import tidy

            return tidy(args)
        if args.command in ("install", "uninstall"):
            return commands.install(args)
        if args.command == "demo":
            return commands.demo(args, hook=_hook, review=_review)
        if args.auto_approve:
            return commands.auto_approve(args)
        # every command returned above: a new one without its branch must not open the TUI instead
        raise NotImplementedError(f"no handler for the command {args.command!r}")
    except UserError as e:
        print(f"memcurate: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return _leave(130)
    except BrokenPipeError:
        raise  # the reader left: main() says nothing
    except Exception as e:
        if args.debug:
            raise
        print(
            f"memcurate: internal error: {e.__class__.__name__}: {e} (run with --debug for details)",
            file=sys.stderr,
        )
        return 1


# Each command's --help: what it does (its one-line help) and an example.
EXAMPLES = {
    "hook": "Claude Code runs it (memcurate install writes the hooks):\n  memcurate hook < payload.json",
    "triage": "  memcurate triage ~/.claude/projects/-home-me-code-app/   # every session of that folder\n"
    "  memcurate triage session.jsonl --json",
    "status": "  memcurate status\n  memcurate status --json | jq .pending",
    "install": "  memcurate install                    # .claude/settings.local.json\n"
    "  memcurate install --scope user       # every project",
    "uninstall": "  memcurate uninstall\n  memcurate uninstall --scope user",
    "demo": "  memcurate demo                 # opens the TUI on it\n  memcurate demo --auto-approve",
    "check": "  memcurate check\n  memcurate check --json",
    "tidy": "  memcurate tidy\n  memcurate list                 # the proposals it staged",
    "list": "  memcurate list\n  memcurate list --draft --json\n  memcurate list --all",
    "show": "  memcurate show 20261120T091705Z-d7f4a866/decision\n  memcurate show 20261120T0917          # any unique prefix of an id",
    "approve": "  memcurate approve 20261120T091705Z-d7f4a866/decision claude/3f2a",
    "reject": "  memcurate reject 20261120T091705Z-d7f4a866/tech_debt --reason 'already in the ADR'",
}


class _Commands:
    """The subparsers, each with its help as description and an example (EXAMPLES), kept by name so an
    unknown option is reported by the command's own parser."""

    def __init__(self, action) -> None:
        self.action = action
        self.parsers: dict = {}

    def add_parser(self, name: str, *, help: str):  # noqa: A002 (argparse's word)
        import argparse

        p = self.action.add_parser(
            name,
            help=help,
            description=help[:1].upper() + help[1:] + ".",
            epilog="examples:\n" + EXAMPLES[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.parsers[name] = p
        return p


def _review_parsers(sub) -> tuple:
    """`list`, `show`, `approve`, `reject`: review from a script (curator/review_commands.py)."""
    p_list = sub.add_parser(
        "list", help="what waits for review, each with an id (read-only, never drafts)"
    )
    p_list.add_argument(
        "--all", action="store_true", help="also what was saved, rejected or skipped"
    )
    p_list.add_argument(
        "--draft",
        action="store_true",
        help="first draft what is triaged (saving nothing): this may call the model",
    )
    p_show = sub.add_parser(
        "show", help="a draft as it would be written: decision, issues, confidence, diff"
    )
    p_show.add_argument(
        "id", metavar="ID", help="an id from `memcurate list`, or a unique prefix of one"
    )
    p_approve = sub.add_parser("approve", help="save the items named (all or none are approved)")
    p_approve.add_argument(
        "ids", nargs="+", metavar="ID", help="ids from `memcurate list`, or unique prefixes"
    )
    p_reject = sub.add_parser(
        "reject", help="reject the items named: not proposed again from the same evidence"
    )
    p_reject.add_argument(
        "ids", nargs="+", metavar="ID", help="ids from `memcurate list`, or unique prefixes"
    )
    p_reject.add_argument(
        "--reason", metavar="TEXT", default="", help="why (kept with the rejection)"
    )
    return p_list, p_show, p_approve, p_reject


def _confidence(value: str) -> float:
    """--min-confidence's value: a number from 0 to 1 (anything else is a usage error)."""
    import argparse
    import math

    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not 0 <= x <= 1:  # NaN too
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, found {value!r}")
    return x


def _hook(stdin: bytes, env: dict) -> int:
    """The real hook, in-process (the demo feeds its session through it as Claude Code would)."""
    from memcurate.hooks.dispatch import run

    return run(stdin, env)


def _review(project: str) -> int:
    """The live review TUI on `project` (imported only here: the engine knows nothing of it)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "memcurate: the review TUI needs a terminal; use `memcurate --auto-approve` or "
            "`memcurate status` without one",
            file=sys.stderr,
        )
        return 1
    import gc

    # The start allocates much and frees little: no cyclic collection until the first frame is on the screen
    # (~7% of the imports; the app enables it then, widgets/app.py).
    gc.disable()
    from memcurate.widgets.app import run

    return _leave(run(project))


def _leave(code: int) -> int:
    """Exit with `code` now, not when the drafting threads still inside a model call return (a call may
    take drafting.timeout_seconds, and the fallback chain more): their `claude` children are killed, and
    what they leave half-done in staging is resumed by the next run, as after any process killed at any
    point (bench/crash_bench.py). With no such thread, an ordinary return."""
    import threading

    # The drafting threads are named so (pipeline's pool, the TUI's process thread): joined at exit
    # however they were started, they are what would keep the process alive.
    if not any(t.is_alive() and t.name.startswith("memcurate-") for t in threading.enumerate()):
        return code
    from memcurate.curator.drafting.claude_cli import kill_children

    kill_children()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
