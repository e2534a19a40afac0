"""Run the evalstore command line from a checkout: ``python cli.py --help``.

The installed console script ``evalstore`` runs the same Typer app (``evalstore.cli:app``);
this file is not installed.
"""

from evalstore.cli import main

if __name__ == "__main__":
    main()
