"""`python -m localeval.cli`: the command line, as the `localeval` script runs it."""

from localeval.cli import main

main()
