"""``python -m vreact.cli``."""

from vreact.cli import main

main()
