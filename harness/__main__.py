"""`python -m harness` is `privlab`."""

import sys

from harness.entry import main

sys.exit(main())
