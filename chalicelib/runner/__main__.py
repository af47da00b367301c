"""``python -m chalicelib.runner``: run the job of the ticket read from standard input."""

import sys

from chalicelib.runner.job import main

sys.exit(main())
