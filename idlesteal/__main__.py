"""`python -m idlesteal` = the idlesteal command."""
import sys

from .cli import main

sys.exit(main())
