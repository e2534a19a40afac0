"""``python -m evalstore``: the command line."""

from .entry import main

main()
