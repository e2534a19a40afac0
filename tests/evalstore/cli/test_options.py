"""The command line's options as a whole (evalstore.cli.options and the commands declaring theirs):
one short letter, one meaning, across every command; the root's options after a command too
(issue 44.8)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict

import typer

from evalstore.cli import application

app = application()

#: the root's options (evalstore --db X eval ...) that a command takes after its name as well
ROOT_STORE_OPTIONS = ("--db", "--memory-limit", "--threads", "--temp-dir", "--wait")


def _commands(cmd=None, path=()):
    """(path, click command) of every leaf command."""
    cmd = cmd or typer.main.get_command(app)
    if hasattr(cmd, "list_commands"):
        ctx = type(cmd).context_class(cmd)
        for name in cmd.list_commands(ctx):
            yield from _commands(cmd.get_command(ctx, name), (*path, name))
    else:
        yield " ".join(path), cmd


def _options(cmd):
    return [p for p in cmd.params if type(p).__name__.endswith("Option")]


def test_one_letter_one_meaning():
    """A short option means one long option wherever it is given (-m is a metric everywhere:
    fuse's -m was --method, -p was --param in fuse and --port in serve, -w --weights and --with)."""
    meaning = defaultdict(lambda: defaultdict(list))
    for path, cmd in _commands():
        for p in _options(cmd):
            long = max(p.opts, key=len)
            for short in (o for o in p.opts if len(o) == 2):
                meaning[short][long].append(path)
    clashes = {short: dict(longs) for short, longs in meaning.items() if len(longs) > 1}
    assert not clashes
    assert set(meaning["-m"]) == {"--metric"} and set(meaning["-p"]) == {"--per-topic"}


def test_a_long_option_has_its_letter_everywhere():
    letters = defaultdict(dict)
    for path, cmd in _commands():
        for p in _options(cmd):
            short = [o for o in p.opts if len(o) == 2]
            letters[max(p.opts, key=len)][path] = short[0] if short else None
    differ = {long: by for long, by in letters.items() if len(set(by.values())) > 1}
    assert not differ


def test_root_options_after_the_command():
    for path, cmd in _commands():
        opts = {o for p in _options(cmd) for o in p.opts}
        assert "--debug" in opts, path
        if "--db" in opts:  # a command of a store takes every store option of the root
            assert set(ROOT_STORE_OPTIONS) <= opts, path


def test_debug_after_the_command_shows_the_traceback(sample_db):
    """`evalstore eval ... --debug` gave "No such option: --debug" (the console script, as a user runs it)."""
    env = {k: v for k, v in os.environ.items() if k != "EVALSTORE_DEBUG"}
    args = [sys.executable, "-m", "evalstore", "eval", "-q", "nope", "-m", "AP", "--db", str(sample_db)]
    r = subprocess.run([*args, "--debug"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "Traceback" in r.stderr and "No such option" not in r.stderr
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "no qrels set named 'nope'" in r.stderr


def test_fuse_takes_no_metric_letter(sample_db, cli):
    code, _, err = cli("fuse", "-r", "bm25", "-r", "dense", "-m", "nDCG@10", "--name", "x", "--db", sample_db)
    assert code == 2 and "No such option: -m" in err
    code, _, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "wsum", "--weights", "0.7,0.3", "-M", "20",
                       "--name", "x", "--db", sample_db)  # fmt: skip
    assert code == 0, err
