"""``python -m evalstore``: the command line."""

from .cli import main

main()
