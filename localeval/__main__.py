"""`python -m localeval`: the command line, as the `localeval` script runs it (for a
virtual environment whose scripts folder is not on PATH)."""

from localeval.cli import main

main()
