import sys

from linerate.cli import main

sys.exit(main())
