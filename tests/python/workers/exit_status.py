"""Exits with the status given on the command line on the rank given (to test the harness)."""

import os
import sys

if os.environ.get("HOOP_RANK") == sys.argv[1]:
    sys.exit(int(sys.argv[2]))
