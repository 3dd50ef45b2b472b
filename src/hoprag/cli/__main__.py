"""`python -m hoprag.cli`: the `hoprag` command."""

import sys

from hoprag.cli.main import main

sys.exit(main())
