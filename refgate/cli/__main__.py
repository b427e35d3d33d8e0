"""``python -m refgate.cli``."""

from refgate.cli import main

main()
