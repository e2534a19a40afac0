"""The version of evalstore (also recorded with every stored score and analysis as its engine version)."""

__version__ = "0.1.0"
