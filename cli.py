"""Run the evalstore command line from a checkout: ``python cli.py --help``.

The same entry point as the installed console script ``evalstore`` (``evalstore.entry:main``: its
process set-up, then the Typer app ``evalstore.cli:app``); this file is not installed.
"""

from evalstore.entry import main

if __name__ == "__main__":
    main()
