"""`python -m privlab` is `privlab`."""

import sys

from .entry import main

sys.exit(main())
